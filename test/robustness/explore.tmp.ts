import { startTransportHostile, refusedUrl, startSelfSignedTls, startProxy, patchJson, type Hostile } from './hostile.js';
import { runCli, tempDir, writeTargetConfig, readLatestReport } from '../cli/cli.js';
import { createReferenceServer } from '../../src/reference/index.js';

const kind = process.argv[2]!;
const only = process.argv[3] ?? '^discovery\\.';
const ref = await createReferenceServer({ port: 0, limits: { perKeyPerWindow: 1000, perOrgPerWindow: 5000, tokenIssuancePerWindow: 1000 } });
let h: Hostile | undefined; let url: string; let tokenUrl: string | undefined;
const proxied: Record<string, any> = {
  'wrong-content-type': { alter: (_p: string, r: any) => { r.headers['content-type'] = 'text/plain'; } , tokenDirect: true},
  'openapi-invalid': { answer: (_m: string, p: string) => p === '/openapi.json' ? { status: 200, headers: { 'content-type': 'application/json' }, body: '{"openapi":"3.0.3","info":{"title":"x"},"paths":42}' } : undefined, tokenDirect: true },
  'openapi-wrong-version': { alter: (p: string, r: any) => { if (p === '/openapi.json') patchJson(r, (d) => { d.openapi = '3.1.0'; }); }, tokenDirect: true },
  'capability-wrong-version': { alter: (p: string, r: any) => { if (p.startsWith('/fhir/R4/metadata')) patchJson(r, (d) => { d.fhirVersion = '5.0.0'; }); }, tokenDirect: true },
  'token-junk': { answer: (_m: string, p: string) => p.startsWith('/auth/token') ? { status: 200, headers: { 'content-type': 'text/html' }, body: '<html>\u0000junk{{' } : undefined },
  'retry-after-hour': { answer: (_m: string, p: string) => /^\/fhir\/R[45]\/(?!metadata)/.test(p) ? { status: 429, headers: { 'content-type': 'application/fhir+json', 'retry-after': '3600' }, body: '{"resourceType":"OperationOutcome","issue":[{"severity":"error","code":"throttled","diagnostics":"HPB-00105: Rate limit exceeded"}]}' } : undefined, tokenDirect: true },
};
if (kind === 'refused') url = await refusedUrl();
else if (kind === 'dns') url = 'http://conformance-target.invalid';
else if (kind === 'tls') { h = await startSelfSignedTls(); url = h.url.replace('127.0.0.1', '127.0.0.1'); }
else if (proxied[kind]) { h = await startProxy(ref.url, proxied[kind]); url = h.url; tokenUrl = h.tokenUrl; }
else { h = await startTransportHostile(kind); url = h.url; }
const dir = await tempDir('explore');
const config = await writeTargetConfig(dir, { baseUrl: url, tokenUrl, requestMs: 1500, runMs: Number(process.env.RUNMS ?? 10000) });
const r = await runCli(['run', '--config', config, '--profile', 'quick', '--only', only, '--report-dir', dir, '--quiet'], { timeoutMs: 60000 });
console.log(kind, 'code', r.code, 'ms', r.ms, 'rss MB', Math.round((r.peakRssKb ?? 0) / 1024), 'timedOut', r.timedOut, 'bytesSent', h?.bytesSent(), 'reqs', h?.requests.length);
console.log('STDERR:', r.stderr.slice(0, 1500));
try {
  const rep = await readLatestReport(dir);
  const c: Record<string, number> = {}; for (const x of rep.checks) c[x.outcome] = (c[x.outcome] ?? 0) + 1;
  console.log(c);
  const msgs = new Map<string, number>(); for (const x of rep.checks) if (x.outcome !== 'pass') msgs.set(`${x.outcome} ${x.message}`, (msgs.get(`${x.outcome} ${x.message}`) ?? 0) + 1);
  for (const [m, n] of msgs) console.log(n, m.slice(0, 250));
  const trunc = rep.checks.flatMap((x) => x.evidence).filter((e) => e.response?.bodyTruncated).length;
  console.log('truncated evidence', trunc);
} catch (e) { console.log('no report', e); }
await h?.close(); await ref.close();
