// Runs a checkout's run script (bin/run-cache.js: the run's modules as one CommonJS script) with a
// V8 code cache beside it. V8 compiles most functions lazily, at their first call; a cache made at
// the end of a process holds the code of every function it ran, so the next process of the same
// command neither parses nor compiles them (README, "Speed"). One cache per command (a `faults`
// listing runs little of what `run` does). A cache V8 rejects (another Node, other V8 flags) or a
// missing one is made again at the end of the process. FHIR_CONFORMANCE_CODE_CACHE=0 runs without.
import { createHash } from 'node:crypto';
import { readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname } from 'node:path';
import vm from 'node:vm';

const COMMANDS = new Set(['run', 'serve', 'requirements', 'report', 'diff', 'faults', 'init']);

/**
 * Loads `file` (the script's modules initialised) and gives a function that runs its exported
 * `main(argv)` and resolves with the exit code, keeping the code cache afterwards. A script that does
 * not load throws here, before anything ran, so the caller can run the ES modules instead.
 */
export function loadScript(file, argv) {
  const started = process.cpuUsage();
  const useCache = process.env.FHIR_CONFORMANCE_CODE_CACHE !== '0';
  const cacheFile = cacheFileOf(file, argv);
  let cachedData;
  if (useCache) {
    try {
      cachedData = readFileSync(cacheFile);
    } catch {
      // not made yet
    }
  }
  const script = new vm.Script(`(function (exports, require, module, __filename, __dirname) {${readFileSync(file, 'utf8')}\n})`, {
    filename: file,
    ...(cachedData ? { cachedData } : {}),
  });
  const module = { exports: {} };
  script.runInThisContext()(module.exports, createRequire(file), module, file, dirname(file));
  if (typeof module.exports.main !== 'function') throw new Error(`${file} exports no main`);
  return async () => {
    const code = await module.exports.main(argv);
    const used = cpuMsSince(started);
    if (useCache && (cachedData === undefined || script.cachedDataRejected || ranMore(cacheFile, used))) keepCache(script, cacheFile, used);
    return code;
  };
}

/**
 * V8 rejects a cache made under other flags (`node --cpu-prof`, NODE_OPTIONS=--max-semi-space-size=...):
 * a process started with flags keeps its own cache, so runs with and without them do not make each
 * other's again.
 */
export function cacheFileOf(file, argv) {
  const command = COMMANDS.has(argv[0]) ? argv[0] : 'other';
  const flags = [...processFlags(), process.env.NODE_OPTIONS ?? ''].join(' ').trim();
  return `${file}.${command}${flags === '' ? '' : `.${createHash('sha256').update(flags).digest('hex').slice(0, 12)}`}.v8`;
}

/** The process's command-line flags, without the code of -e/-p (the script, not a flag). src/validator-cache.ts has its own copy (it cannot import bin/). */
export function processFlags() {
  const out = [];
  const args = process.execArgv;
  for (let i = 0; i < args.length; i++) {
    if (['-e', '--eval', '-p', '--print'].includes(args[i])) i++;
    else if (!/^--(eval|print)=/.test(args[i])) out.push(args[i]);
  }
  return out;
}

/** CPU milliseconds this process used since `started` (process.cpuUsage()). */
function cpuMsSince(started) {
  const { user, system } = process.cpuUsage(started);
  return (user + system) / 1000;
}

/**
 * Whether this run did much more than the one that made the cache (its CPU time, kept beside the
 * cache): a cache made by a short run (`--only`, a test's few checks) holds few of the functions a
 * whole run needs, and every later run compiled them again (a quick run about 0.3 s slower). Much
 * more: twice the maker's CPU time (the machine's slow phases are at most about 1.7 times its
 * fast ones), so runs of one size never make it again. A cache without the record is made again once.
 */
export function ranMore(cacheFile, usedMs) {
  let maker;
  try {
    maker = Number(readFileSync(`${cacheFile}.cpu`, 'utf8'));
  } catch {
    return true;
  }
  return !(maker > 0) || usedMs > 2 * maker;
}

/** Writes the script's code cache as it is now (the functions run so far compiled in it), and the CPU time of the run that made it. */
function keepCache(script, cacheFile, usedMs) {
  const tmp = `${cacheFile}.${process.pid}.tmp`;
  try {
    writeFileSync(tmp, script.createCachedData());
    renameSync(tmp, cacheFile);
    writeFileSync(`${cacheFile}.cpu`, String(Math.round(usedMs)));
  } catch {
    rmSync(tmp, { force: true }); // a read-only cache: the next process compiles again
  }
}
