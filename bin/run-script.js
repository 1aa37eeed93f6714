// Runs a checkout's run script (bin/run-cache.js: the run's modules as one CommonJS script) with a
// V8 code cache beside it. V8 compiles most functions lazily, at their first call; a cache made at
// the end of a process holds the code of every function it ran, so the next process of the same
// command neither parses nor compiles them (README, "Speed"). One cache per command (a `faults`
// listing runs little of what `run` does). A cache V8 rejects (another Node, other V8 flags) or a
// missing one is made again at the end of the process. FHIR_CONFORMANCE_CODE_CACHE=0 runs without.
import { readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname } from 'node:path';
import vm from 'node:vm';

const COMMANDS = new Set(['run', 'serve', 'requirements', 'report', 'diff', 'faults', 'init']);

/** Runs `file`'s exported `main(argv)`; resolves with its exit code. */
export async function runScript(file, argv) {
  const useCache = process.env.FHIR_CONFORMANCE_CODE_CACHE !== '0';
  const command = COMMANDS.has(argv[0]) ? argv[0] : 'other';
  const cacheFile = `${file}.${command}.v8`;
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
  const code = await module.exports.main(argv);
  if (useCache && (cachedData === undefined || script.cachedDataRejected)) keepCache(script, cacheFile);
  return code;
}

/** Writes the script's code cache as it is now (the functions run so far compiled in it). */
function keepCache(script, cacheFile) {
  const tmp = `${cacheFile}.${process.pid}.tmp`;
  try {
    writeFileSync(tmp, script.createCachedData());
    renameSync(tmp, cacheFile);
  } catch {
    rmSync(tmp, { force: true }); // a read-only cache: the next process compiles again
  }
}
