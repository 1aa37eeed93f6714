/**
 * Token lifetime (spec: Authentication > Token issuance, rule 2; Limits).
 * The probe token is issued when the run starts and used at its end, so the
 * lifetime costs no wall time beyond the run itself.
 */
import { type CheckDefinition, defineCheck, expiryProbe, PROBE_EXPIRY_SLACK_MS } from '../../src/engine/index.js';
import type { HttpResponse } from '../../src/http/index.js';
import { expectError, onSurface, surfaceLabel, surfaceProbeUrl, surfacesOf } from '../../src/service/index.js';

const area = 'token-lifetime';

export const checks: CheckDefinition[] = [
  defineCheck({
    id: 'token-lifetime.valid-before-expiry',
    surfaces: {
      release: 'every published release (from the operation model)',
      resource: 'every published resource family, one probe each (its read of a random id, else its search), all sent at the same moment',
      keyKind: 'main key',
      leftOut: [
        'a surface whose read scope the main client is not declared to hold (clients[].scopes), or whose request a wait held past the token end: listed in the notChecked observation',
      ],
    },
    title: 'an access token is still accepted shortly before its lifetime ends',
    area,
    level: 'MUST',
    requirements: ['token-lifetime.five-minutes'],
    quote: 'An access token lives 5 minutes.',
    tags: ['waits', 'expiry-probe'],
    timeoutMs: 15 * 60_000,
    async run(ctx) {
      const { probe } = await expiryProbe(ctx);
      const margin = Math.max(3000, probe.lifetimeMs * 0.1);
      const at = probe.issuedAt + probe.lifetimeMs - margin;
      if (Date.now() < at + 500) {
        ctx.waiting('the probe token is used shortly before it expires', at + 500 - Date.now());
        await ctx.sleep(at + 500 - Date.now());
      }
      for (let i = 0; i < 50 && !probe.beforeExpiry; i++) await ctx.sleep(100);
      const res = await probe.beforeExpiry;
      const others = (await probe.beforeExpirySurfaces) ?? [];
      const earliestEndMs = probe.lifetimeMs - PROBE_EXPIRY_SLACK_MS;
      // The probe URL's answer and one answer of each other surface the probe token reads, all sent at the same moment.
      const answers: Array<{ label: string; res?: HttpResponse; sentAfterMs?: number; why?: string }> = [];
      const held = probe.heldPastExpiry;
      answers.push({
        label: probe.probeLabel ?? 'probe',
        ...(res ? { res, sentAfterMs: probe.sentAfterMs ?? probe.lifetimeMs - margin } : {}),
        ...(held
          ? {
              why: `a wait on client main held the probe request until ${held.sentAfterMs} ms after the token was requested, past ${held.earliestEndMs} ms (the ${probe.lifetimeMs / 1000} s lifetime less whole-second token times and transit)`,
            }
          : res
            ? {}
            : { why: `the probe request before expiry did not complete: ${probe.error ?? 'unknown'}` }),
      });
      for (const o of others)
        answers.push({
          label: o.label,
          ...(o.res ? { res: o.res, sentAfterMs: Date.parse(o.res.exchange.startedAt) - probe.issuedAt } : {}),
          ...(o.why ? { why: o.why } : {}),
        });
      const checked: string[] = [];
      const inconclusive: string[] = [];
      for (const a of answers) {
        if (!a.res || a.sentAfterMs === undefined) {
          inconclusive.push(`${a.label}: ${a.why ?? 'no answer'}`);
          continue;
        }
        ctx.attach(a.res.exchange);
        const ageS = (a.sentAfterMs / 1000).toFixed(1);
        // A refusal answered only after the token may have ended (a slow answer: the target judges the token
        // when it reads the request, somewhere before it answers) cannot show the token ended early.
        const answeredAfterMs = a.sentAfterMs + a.res.exchange.durationMs;
        if (a.res.status === 401 && answeredAfterMs >= earliestEndMs) {
          inconclusive.push(
            `${a.label}: sent ${ageS} s after the token was requested, answered 401 only ${(answeredAfterMs / 1000).toFixed(1)} s after, past ${(earliestEndMs / 1000).toFixed(1)} s`,
          );
          continue;
        }
        checked.push(a.label);
        // Accepted: answered as a valid token is (404 for the probe's random id), not refused, not a server error.
        ctx.check(
          a.res.status !== 401 && a.res.status < 500,
          `${a.label === 'probe' ? '' : `${a.label}: `}a token at most ${ageS} s old (lifetime ${probe.lifetimeMs / 1000} s) was answered ${a.res.status}`,
          {
            requirement: 'token-lifetime.five-minutes',
            expected: 'accepted (not 401, not 5xx)',
            actual: a.res.status,
            exchange: a.res.exchange.id,
          },
        );
      }
      ctx.observe('surfaces', { checked, ...(inconclusive.length ? { notChecked: inconclusive } : {}) });
      if (checked.length === 0) {
        // Our own wait (a 429's hold on the key) or a slow answer, not the target's token: the rule was not observable this run.
        if (answers.every((a) => a.res === undefined && a.why?.startsWith('the probe request before expiry did not complete')))
          throw new Error(answers[0]!.why);
        ctx.skip(`inconclusive on this run: no answer can show the token valid before expiry (${inconclusive.join('; ')})`);
      }
    },
  }),
  defineCheck({
    id: 'token-lifetime.expired-token-refused',
    surfaces: {
      release: 'every published release (from the operation model)',
      resource: 'every published resource family, one probe each (its read of a random id, else its search)',
      keyKind: 'main key',
      leftOut: ['a surface whose read scope the main client is not declared to hold (clients[].scopes): listed in the notChecked observation'],
    },
    title: 'an expired access token gives 401 HPB-00107',
    area,
    level: 'MUST',
    requirements: ['token-lifetime.expired-401-hpb-00107', 'catalog.hpb-00107'],
    quote: 'An expired token gives 401 `HPB-00107`; the client requests a new token.',
    tags: ['waits', 'expiry-probe'],
    timeoutMs: 15 * 60_000,
    async run(ctx) {
      const { probe, token } = await expiryProbe(ctx);
      // From when the token arrived (the latest the target can have issued it), plus whole-second token times and slack.
      const issued = probe.receivedAt ?? probe.issuedAt;
      const at = issued + probe.lifetimeMs + 2000;
      if (Date.now() < at) {
        ctx.waiting('waiting for the probe token to expire', at - Date.now());
        await ctx.sleep(at - Date.now());
      }
      // Every surface the target publishes (release and resource family, from the operation model) whose read
      // scope the probe token holds: an expired token is refused on each, not only where it was tried first.
      const probes: Array<{ surface: string; url: string }> = [];
      const unprobed: string[] = [];
      for (const s of surfacesOf(ctx.model)) {
        if (s.probe.scope && probe.scopes.includes(s.probe.scope)) probes.push({ surface: surfaceLabel(s), url: surfaceProbeUrl(s) });
        else unprobed.push(`${surfaceLabel(s)} (the probe token does not hold ${s.probe.scope ?? 'its unpublished scope'})`);
      }
      if (probes.length === 0) probes.push({ surface: 'probe', url: probe.probeUrl });
      const checked: string[] = [];
      for (const p of probes) {
        const res = await ctx.request({ url: p.url, token, client: 'main', headers: { accept: 'application/fhir+json' } });
        const ageMs = Date.parse(res.exchange.startedAt) - issued;
        const where = p.surface === 'probe' ? '' : ` on ${p.surface}`;
        if (res.status !== 401 && res.status < 500)
          ctx.fail(
            `a token past its lifetime was answered ${res.status}${where}: sent ${(ageMs / 1000).toFixed(1)} s after the token response arrived (lifetime ${probe.lifetimeMs / 1000} s, token requested ${(issued - probe.issuedAt) / 1000} s before it arrived)`,
            { expected: 401, actual: res.status, requirement: 'token-lifetime.expired-401-hpb-00107', exchange: res.exchange.id },
          );
        onSurface(p.surface, () => expectError(res, { status: 401, code: 'HPB-00107', requirement: 'token-lifetime.expired-401-hpb-00107' }));
        if (p.surface !== 'probe') checked.push(p.surface);
      }
      ctx.observe('surfaces', { checked, ...(unprobed.length ? { notChecked: unprobed } : {}) });
      ctx.observe('token-lifetime.expired-after-ms', Date.now() - probe.issuedAt);
    },
  }),
];

export default checks;
