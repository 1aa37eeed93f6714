/**
 * 429 HPB-00105 on every Encounter operation (endpoint table). One exhausting
 * check covers the four operations: it drives a key to its limit with the
 * rate-limit suite's burst, then sends read, search, create and update while the
 * key is refused, and leaves the key usable again.
 */
import { randomUUID } from 'node:crypto';
import { defineCheck, type CheckDefinition } from '../../src/engine/check.js';
import { catalogCodeOf, expectError } from '../../src/engine/expect.js';
import { burstBound, burstUntil429, probeFor, quietKey, recover, throttleRole } from '../rate-limit/support.js';
import { area, CRU, encounterBody, RS } from './support.js';

export const throttleChecks: CheckDefinition[] = [
  defineCheck({
    id: 'encounter.operations-429',
    title: 'Encounter read, search, create and update answer 429 HPB-00105 while the key is over its limit',
    area,
    level: 'MUST',
    requirements: ['encounter.read-429', 'encounter.search-429', 'encounter.create-429', 'encounter.update-429'],
    quote: '429 `HPB-00105`',
    tags: ['writes', 'exhausts-key-limit'],
    fixtures: ['encounter', 'patient', 'practitioner', 'medicationRequest'],
    timeoutMs: 600_000,
    async run(ctx) {
      const configured = probeFor(ctx, throttleRole(ctx));
      const role = configured.role;
      const id = ctx.fixture('encounter');
      const ops = {
        read: ctx.operation('Encounter', 'read', 'R4'),
        search: ctx.operation('Encounter', 'search-type', 'R4'),
        create: ctx.operation('Encounter', 'create', 'R4'),
        update: ctx.operation('Encounter', 'update', 'R4'),
      };
      // Tokens first, so that no token request falls inside the exhausted window.
      await ctx.token(RS, role);
      await ctx.token(CRU, role);
      // The key's ceiling as the target reports it (X-RateLimit-Limit), else as the config declares it.
      const quiet = await quietKey(ctx, configured);
      const probe = { ...configured, limit: quiet.headers.limit ?? configured.limit };
      const burst = await burstUntil429(ctx, probe, burstBound(probe));
      if (!burst.refused) return ctx.skip(`the key was not refused within ${burstBound(probe)} requests; the rate-limit suite reports this`);
      const unpaced = { role, pace: false, retry: 'none', expect429: true } as const;
      // The update targets an id that does not exist: a server that does not refuse it answers 404 and changes nothing.
      const missing = randomUUID();
      const attempts = [
        { requirement: 'encounter.read-429', send: () => ctx.fhir({ ...unpaced, scopes: RS, url: ctx.path(ops.read.path, { id }) }) },
        { requirement: 'encounter.search-429', send: () => ctx.fhir({ ...unpaced, scopes: RS, url: `${ops.search.path}?_id=${id}` }) },
        { requirement: 'encounter.create-429', send: () => ctx.fhir({ ...unpaced, scopes: CRU, method: 'POST', url: ops.create.path, body: encounterBody(ctx) }) },
        { requirement: 'encounter.update-429', send: () => ctx.fhir({ ...unpaced, scopes: CRU, method: 'PUT', url: ctx.path(ops.update.path, { id: missing }), body: encounterBody(ctx, { id: missing }) }) },
      ];
      for (const a of attempts) {
        const res = await a.send();
        if (res.status < 300) {
          const created = res.json as { id?: unknown } | undefined;
          if (typeof created?.id === 'string' && created.id !== id) ctx.created('Encounter', created.id);
        }
        ctx.check(res.status === 429 && catalogCodeOf(res) === 'HPB-00105', `${a.requirement}: answered ${res.status} ${catalogCodeOf(res) ?? ''} while the key is over its limit`.trim(), {
          requirement: a.requirement,
          expected: { status: 429, code: 'HPB-00105' },
          actual: { status: res.status, code: catalogCodeOf(res) },
          exchange: res.exchange.id,
        });
        if (res.status === 429) expectError(res, { status: 429, code: 'HPB-00105', issueCode: 'throttled', requirement: a.requirement });
      }
      await recover(ctx, probe, burst.refused);
    },
  }),
];
