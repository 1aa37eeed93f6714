/**
 * Several keys, soundly: with the organization's ceiling declared, paced requests spread over
 * the organization's keys and neither a key's ceiling nor the organization's is exceeded; without
 * it the run stays on the main key and says why. Against the embedded reference with short
 * windows, whose per-organization limit is the declared ceiling (a 429 would show an excess).
 * Nothing here is timed: the windows are counted over the run's own send times.
 */
import { describe, expect, it } from 'vitest';
import { defineCheck, type CheckDefinition } from '../../src/engine/check.js';
import type { Exchange } from '../../src/engine/types.js';
import type { Subscriber } from '../../src/engine/events.js';
import { runConformance } from '../../src/run/index.js';
import { keyLimits, readsCheck, thirdKey } from './keys-support.js';

const WINDOW_MS = 2000;
const PER_KEY = 8;
const PER_ORG = 12;
const limits = keyLimits(PER_KEY, PER_ORG, WINDOW_MS);

/** Ten checks of three reads each. */
const checks: CheckDefinition[] = Array.from({ length: 10 }, (_, i) =>
  readsCheck(`demo.reads-${i}`, `three reads (${i})`, 3, String(i), (ctx, res) => ctx.check(res.status !== 429, `429 on ${res.exchange.client}`)),
);

const SCOPES = ['system/MedicationRequest.rs'];

async function run(organization?: number, third = false, windowLimits: Partial<typeof limits> = {}) {
  const sent: Exchange[] = [];
  const outcome = await runConformance({
    checks,
    profile: 'full',
    progress: false,
    writeReports: false,
    reference: {
      limits: { ...limits, perOrgPerWindow: organization ?? PER_ORG, ...windowLimits },
      ...(third ? { extraClients: [thirdKey(windowLimits.perKeyPerWindow ?? PER_KEY, SCOPES).extraClient] } : {}),
    },
    ...(organization
      ? {
          configOverlay: (raw: Record<string, unknown>) => ({
            ...raw,
            organization: { requestsPerMinute: organization },
            ...(third ? { clients: [...(raw.clients as object[]), thirdKey(windowLimits.perKeyPerWindow ?? PER_KEY, SCOPES).configClient] } : {}),
          }),
        }
      : {}),
    subscribers: [(e) => void (e.type === 'exchange' && e.exchange.client && sent.push(e.exchange))],
  });
  return { outcome, sent };
}

/** `check` alone on the main key and extra (the organization's ceiling, 30, declared), with windows of `windowMs`. */
function runOnTwoKeys(check: CheckDefinition, windowMs: number, subscriber: Subscriber) {
  return runConformance({
    checks: [check],
    profile: 'full',
    progress: false,
    writeReports: false,
    reference: { limits: { ...limits, perOrgPerWindow: 30, windowMs, tokenWindowMs: windowMs } },
    configOverlay: (raw: Record<string, unknown>) => ({ ...raw, organization: { requestsPerMinute: 30 } }),
    subscribers: [subscriber],
  });
}

/** The most requests among `sent` within any window (by their send times). */
function mostInAWindow(sent: readonly Exchange[], windowMs = WINDOW_MS): number {
  const t = sent.map((x) => Date.parse(x.startedAt)).sort((a, b) => a - b);
  let most = 0;
  for (let i = 0, j = 0; i < t.length; i++) {
    while (t[i]! - t[j]! >= windowMs) j++;
    most = Math.max(most, i - j + 1);
  }
  return most;
}

describe("paced requests over the organization's keys", () => {
  it('with the organization ceiling declared: both keys carry requests, no key and not the organization exceeds its ceiling', async () => {
    const { outcome, sent } = await run(PER_ORG);
    for (const r of outcome.results) expect(r.outcome, `${r.id}: ${r.message}`).toBe('pass');
    const byKey = (role: string) => sent.filter((x) => x.client === role);
    expect(byKey('main').length).toBeGreaterThan(0);
    expect(byKey('extra').length).toBeGreaterThan(0);
    expect(byKey('main').length + byKey('extra').length).toBe(30);
    expect(sent.filter((x) => x.response?.status === 429)).toEqual([]);
    expect(outcome.result.info.budget?.requests).toBeGreaterThanOrEqual(30);
    expect(mostInAWindow(byKey('main'))).toBeLessThanOrEqual(PER_KEY);
    expect(mostInAWindow(byKey('extra'))).toBeLessThanOrEqual(PER_KEY);
    expect(mostInAWindow(sent.filter((x) => x.client !== 'second-org'))).toBeLessThanOrEqual(PER_ORG);
    // Whether the run came near the organization's ceiling depends on the machine's speed, not on the
    // pacing (a loaded fresh-clone npm test sent at most 8 in any window): not asserted here; that
    // both keys carried requests and neither ceiling was exceeded is (above).
    const keys = outcome.result.info.budget!.keys;
    expect(keys.roles).toEqual(['main', 'extra']);
    expect(keys.reason).toContain(`organization ceiling ${PER_ORG} per window declared`);
    // A check keeps its key unless that key would have to wait while another is free: wherever a check's
    // reads change key, the key it left had (about) filled its window, or the organization had (its wait
    // then comes from the organization's ceiling, and another key's can be shorter by a few ms: seen on a
    // loaded machine). About: the ceiling less the pacer's one request of headroom, one more of slack for
    // a request that left the window meanwhile.
    let switches = 0;
    const inWindowBefore = (xs: readonly Exchange[], at: number) =>
      xs.filter((x) => Date.parse(x.startedAt) <= at && Date.parse(x.startedAt) > at - WINDOW_MS).length;
    for (const r of outcome.results) {
      const own = r.evidence.filter((x) => x.client);
      for (let i = 1; i < own.length; i++) {
        const left = own[i - 1]!.client!;
        if (own[i]!.client === left) continue;
        switches++;
        const at = Date.parse(own[i]!.startedAt);
        const inWindow = inWindowBefore(byKey(left), at);
        const orgInWindow = inWindowBefore(
          sent.filter((x) => x.client !== 'second-org' && x.id !== own[i]!.id),
          at,
        );
        expect(
          inWindow >= PER_KEY - 2 || orgInWindow >= PER_ORG - 2,
          `${r.id} left ${left} with ${inWindow} of its requests and ${orgInWindow} of the organization's in the window`,
        ).toBe(true);
      }
    }
    expect(switches).toBeLessThan(outcome.results.length);
  });

  it('a second extra client is a key of its own: three keys carry requests, each within its ceiling and the organization within its own', async () => {
    // One check's three reads fill a key's window (4, less one of headroom), and a window outlasts a few checks.
    const perOrg = 20;
    const perKey = 4;
    const windowMs = 6000;
    const { outcome, sent } = await run(perOrg, true, { perKeyPerWindow: perKey, windowMs, tokenWindowMs: windowMs });
    for (const r of outcome.results) expect(r.outcome, `${r.id}: ${r.message}`).toBe('pass');
    const byKey = (role: string) => sent.filter((x) => x.client === role);
    for (const key of ['main', 'extra', 'conformance-main-3']) {
      expect(byKey(key).length, key).toBeGreaterThan(0);
      expect(mostInAWindow(byKey(key), windowMs), key).toBeLessThanOrEqual(perKey);
    }
    expect(sent.filter((x) => x.response?.status === 429)).toEqual([]);
    expect(
      mostInAWindow(
        sent.filter((x) => x.client !== 'second-org'),
        windowMs,
      ),
    ).toBeLessThanOrEqual(perOrg);
    expect(outcome.result.info.budget!.keys.roles).toEqual(['main', 'extra', 'conformance-main-3']);
  }, 90_000);

  it("a check whose key's window fills goes on with the organization's other key instead of waiting for it", async () => {
    // Twelve reads: more than one key's window holds (8, less one of headroom), well within the organization's (30).
    const many = readsCheck('demo.twelve-reads', 'twelve reads', 12, 'many', (ctx, res, j) =>
      ctx.check(res.status === 200, `read ${j}: ${res.status} on ${res.exchange.client}`),
    );
    const waits: Array<{ reason: string; ms: number; client?: string }> = [];
    const sent: Exchange[] = [];
    const windowMs = 30_000;
    const outcome = await runOnTwoKeys(many, windowMs, (e) => {
      if (e.type === 'wait') waits.push(e);
      if (e.type === 'exchange' && e.exchange.client) sent.push(e.exchange);
    });
    const result = outcome.results.find((r) => r.id === 'demo.twelve-reads')!;
    expect(result.outcome, result.message).toBe('pass');
    const keys = result.evidence.filter((x) => x.client).map((x) => x.client);
    expect(keys.slice(0, PER_KEY - 1)).toEqual(Array(PER_KEY - 1).fill(keys[0]));
    expect(new Set(keys).size).toBe(2);
    expect(sent.filter((x) => x.response?.status === 429)).toEqual([]);
    // No wait for a key's window (a 30 s window: one would show).
    expect(waits.filter((w) => w.ms > 1000)).toEqual([]);
  }, 60_000);

  it("while a section has the token endpoint to itself, a check stays on a key holding its token rather than wait for another key's", async () => {
    // A key's window holds 7 (8, less one of headroom): twelve reads fill it, and the other key
    // holds no token. Its token request would wait for the section (here 8 s, in a run the
    // issuance episode's two minutes): the reads wait for main's window (2 s) instead.
    const windowMs = 2000;
    const sectionMs = 8000;
    let sectionEnd: number | undefined;
    const many = defineCheck({
      id: 'demo.reads-beside-a-section',
      title: 'twelve reads while the token endpoint is held',
      area: 'medication-request',
      level: 'MUST',
      requirements: ['medication-request.read-returns-resource'],
      fixtures: ['medicationRequest'],
      async run(ctx) {
        const read = (j: number) => ctx.fhir({ scopes: SCOPES, url: `/fhir/R4/MedicationRequest/${ctx.fixture('medicationRequest')}?_probe=section-${j}` });
        ctx.check((await read(0)).status === 200, 'first read');
        const section = ctx.tokens.alone(async () => {
          await new Promise((r) => setTimeout(r, sectionMs));
          sectionEnd = Date.now();
        });
        for (let j = 1; j < 12; j++) ctx.check((await read(j)).status === 200, `read ${j}`);
        await section;
      },
    });
    const sent: Exchange[] = [];
    const outcome = await runOnTwoKeys(many, windowMs, (e) => void (e.type === 'exchange' && e.exchange.client && sent.push(e.exchange)));
    const result = outcome.results.find((r) => r.id === 'demo.reads-beside-a-section')!;
    expect(result.outcome, result.message).toBe('pass');
    const reads = result.evidence.filter((x) => x.client);
    expect(reads.map((x) => x.client)).toEqual(Array(12).fill('main'));
    // Main's window was waited for (the reads span it), the section was not.
    const last = Date.parse(reads[11]!.startedAt);
    expect(last - Date.parse(reads[0]!.startedAt)).toBeGreaterThanOrEqual(windowMs - 100);
    expect(last).toBeLessThan(sectionEnd!);
    expect(sent.filter((x) => x.response?.status === 429)).toEqual([]);
  }, 60_000);

  it('without it: one key, within its ceiling, and the report says why', async () => {
    const { outcome, sent } = await run();
    expect(new Set(sent.map((x) => x.client))).toEqual(new Set(['main']));
    expect(sent.filter((x) => x.response?.status === 429)).toEqual([]);
    expect(mostInAWindow(sent)).toBeLessThanOrEqual(PER_KEY);
    const keys = outcome.result.info.budget!.keys;
    expect(keys.roles).toEqual(['main']);
    expect(keys.reason).toMatch(/^one key: the config declares no organization ceiling/);
  });
});
