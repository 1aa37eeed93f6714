/**
 * The preflight's token of each client is for all the scopes the config declares it holds, and the
 * run keeps it: checks that judge no scope (CheckDefinition.coveringTokens) send with it on every key
 * of the organization, the third key (a second `extra` client, spread to by its client id) included,
 * without a token request of their own. A target of its own (not embedded: the preflight runs).
 */
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { coveringTokens, type CheckDefinition } from '../../src/engine/check.js';
import type { Exchange } from '../../src/engine/types.js';
import { createReferenceServer, type ReferenceServer } from '../../src/reference/index.js';
import { runConformance } from '../../src/run/index.js';
import { keyLimits, readsCheck, thirdKey } from '../engine/keys-support.js';

const WINDOW_MS = 6000;
const PER_KEY = 4;
const PER_ORG = 20;
const READ = ['system/MedicationRequest.rs'];

/** Three checks of three reads of the fixture each (distinct URLs: nothing is shared): one window of three keys at 4 a window, less one of headroom each. */
const reads: CheckDefinition[] = Array.from({ length: 3 }, (_, i) =>
  readsCheck(`demo.reads-${i}`, `three reads (${i})`, 3, String(i), (ctx, res, j) =>
    ctx.check(res.status === 200, `read ${j}: ${res.status} on ${res.exchange.client}`),
  ),
);

let reference: ReferenceServer;
let dir: string;
let configPath: string;
let declared: Map<string, string[]>;

beforeAll(async () => {
  const scopes = ['system/MedicationRequest.rs', 'system/MedicationRequest.cru', 'system/Encounter.rs'];
  const third = thirdKey(PER_KEY, scopes);
  reference = await createReferenceServer({ host: '127.0.0.1', port: 0, limits: keyLimits(PER_KEY, PER_ORG, WINDOW_MS), extraClients: [third.extraClient] });
  const raw = reference.targetConfig();
  const clients = [...raw.clients.map((c) => ({ ...c, rateLimitPerMinute: PER_KEY })), third.configClient];
  declared = new Map(clients.map((c) => [c.clientId, [...c.scopes]]));
  dir = await mkdtemp(join(tmpdir(), 'fc-preflight-tokens-'));
  configPath = join(dir, 'target.json');
  const config = {
    ...raw,
    clients,
    organization: { requestsPerMinute: PER_ORG },
    limits: { windowSec: WINDOW_MS / 1000, tokenLifetimeSec: 60, tokenIssuancePerMinute: 100 },
  };
  await writeFile(configPath, JSON.stringify(config, null, 2));
}, 30_000);

afterAll(async () => {
  await reference?.close();
  if (dir) await rm(dir, { recursive: true, force: true });
});

async function run(checks: CheckDefinition[], profile: 'quick' | 'read-only' = 'quick') {
  const sent: Exchange[] = [];
  const outcome = await runConformance({
    configPath,
    checks,
    profile,
    progress: false,
    writeReports: false,
    subscribers: [(e) => void (e.type === 'exchange' && sent.push(e.exchange))],
  });
  const tokenScopes = sent.filter((x) => x.request.url.endsWith('/auth/token')).map((x) => new URLSearchParams(x.request.body ?? '').get('scope'));
  return { outcome, sent, tokenScopes };
}

describe("the preflight's tokens", () => {
  it("are for each client's declared scopes, and covering checks on three keys send no token request of their own", async () => {
    const { outcome, sent, tokenScopes } = await run(coveringTokens(reads));
    for (const r of outcome.results) expect(r.outcome, `${r.id}: ${r.message}`).toBe('pass');
    // One token request per client, the preflight's, each for the scopes the client declares.
    expect(tokenScopes.sort()).toEqual([...declared.values()].map((s) => s.join(' ')).sort());
    for (const key of ['main', 'extra', 'conformance-main-3']) expect(sent.filter((x) => x.client === key).length, key).toBeGreaterThan(0);
    expect(sent.filter((x) => x.response?.status === 429)).toEqual([]);
  }, 120_000);

  it('in a read-only run are for the declared read scopes only: no token of the run could write', async () => {
    const { outcome, tokenScopes } = await run(coveringTokens(reads), 'read-only');
    for (const r of outcome.results) expect(r.outcome, `${r.id}: ${r.message}`).toBe('pass');
    // The preflight's, one per client, for its declared read scopes (the reference's clients hold every read
    // scope, the third key two); beside them only the expiry probe's token (the read scopes of every surface).
    const readScopes = (scopes: string[]) => scopes.filter((s) => /\.[rs]+$/.test(s)).join(' ');
    for (const scopes of declared.values()) expect(tokenScopes).toContain(readScopes(scopes));
    expect(tokenScopes.length).toBeLessThanOrEqual(declared.size + 1);
    expect(tokenScopes.flatMap((s) => (s ?? '').split(' ')).filter((s) => !/\.[rs]+$/.test(s))).toEqual([]);
  }, 120_000);

  it('checks asking for exactly their scopes send token requests of their own beside them', async () => {
    const { outcome, tokenScopes } = await run(reads);
    for (const r of outcome.results) expect(r.outcome, `${r.id}: ${r.message}`).toBe('pass');
    expect(tokenScopes.filter((s) => s === READ.join(' ')).length).toBeGreaterThan(0);
  }, 120_000);
});
