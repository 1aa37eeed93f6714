/**
 * What the several-keys tests share: a third key of the main organization (registered with the
 * reference, a second `extra` client in the config), short-window reference limits, and a check
 * of reads of the fixture. test/engine/multi-key and test/run/preflight-tokens use them.
 */
import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { defineCheck, type CheckDefinition } from '../../src/engine/check.js';
import type { CheckContext } from '../../src/engine/context.js';
import type { HttpResponse } from '../../src/http/types.js';
import { PROJECT_ROOT } from '../../src/paths.js';

export const THIRD_KEY_FILE = resolve(PROJECT_ROOT, 'fixtures/reference/keys/conformance-main.rs256.test-key.private.jwk.json');

/** The reference's limits: `perKey` and `perOrg` requests per window of `windowMs`, 100 token requests a window, one-minute tokens. */
export function keyLimits(perKey: number, perOrg: number, windowMs: number) {
  return { perKeyPerWindow: perKey, perOrgPerWindow: perOrg, windowMs, tokenWindowMs: windowMs, tokenIssuancePerWindow: 100, tokenLifetimeSec: 60 };
}

/** The third key: the reference's registration (`extraClient`) and the config's client (`configClient`), holding `scopes`. */
export function thirdKey(perKey: number, scopes: readonly string[]) {
  const { d: _d, p: _p, q: _q, dp: _dp, dq: _dq, qi: _qi, ...pub } = JSON.parse(readFileSync(THIRD_KEY_FILE, 'utf8')) as Record<string, string>;
  return {
    extraClient: {
      clientId: 'conformance-main-3',
      org: 'org-a',
      keyKind: 'sandbox' as const,
      scopes: [...scopes],
      jwks: { keys: [pub] },
      rateLimitPerMinute: perKey,
    },
    configClient: {
      role: 'extra',
      clientId: 'conformance-main-3',
      alg: 'RS256',
      keyKind: 'sandbox',
      scopes: [...scopes],
      privateKey: { file: THIRD_KEY_FILE },
      rateLimitPerMinute: perKey,
    },
  };
}

/** A check of `count` reads of the fixture (distinct URLs, `_probe=<tag>-<j>`: nothing is shared), each judged by `judge`. */
export function readsCheck(
  id: string,
  title: string,
  count: number,
  tag: string,
  judge: (ctx: CheckContext, res: HttpResponse, j: number) => void,
): CheckDefinition {
  return defineCheck({
    id,
    title,
    area: 'medication-request',
    level: 'MUST',
    requirements: ['medication-request.read-returns-resource'],
    fixtures: ['medicationRequest'],
    async run(ctx) {
      for (let j = 0; j < count; j++) {
        const res = await ctx.fhir({
          scopes: ['system/MedicationRequest.rs'],
          url: `/fhir/R4/MedicationRequest/${ctx.fixture('medicationRequest')}?_probe=${tag}-${j}`,
        });
        judge(ctx, res, j);
      }
    },
  });
}
