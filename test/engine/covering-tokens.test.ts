/**
 * Checks that take any token covering their scopes (CheckDefinition.coveringTokens) must judge no
 * scope rule: a wider token would let a target that demands more scopes than the spec pass them.
 */
import { describe, expect, test } from 'vitest';
import { coveringTokens, defineCheck } from '../../src/engine/index.js';
import { loadRequirements } from '../../src/requirements/index.js';
import { referenceCatalog } from '../../src/run/reference-model.js';

/**
 * A requirement about token scopes, by its id: a scope rule, an operation's scope or its 403, the
 * insufficient-scope code, or the R5 surface called with the R4 scopes. (Texts do not tell: every
 * row of an operation table names its scope and its 403 whatever the requirement judges of it.)
 */
const SCOPE_RULE = /scope|-403$|mirror-r4|hpb-00104|insufficient/i;
/** Areas whose checks judge scopes: their tokens' exact scopes are the point. */
const SCOPE_AREAS = ['scopes', 'auth', 'generated', 'errors', 'issuance-limit', 'token-lifetime'];

describe('coveringTokens', () => {
  test('no check that takes a covering token claims a requirement about scopes, and no scope-judging area takes one', async () => {
    const known = new Set(loadRequirements().map((r) => r.id));
    const catalog = await referenceCatalog();
    const covering = catalog.filter((c) => c.coveringTokens);
    expect(covering.length).toBeGreaterThan(100);
    const claims = covering.flatMap((c) => c.requirements.filter((id) => SCOPE_RULE.test(id)).map((id) => `${c.id}: ${id}`));
    expect(claims).toEqual([]);
    expect(covering.flatMap((c) => c.requirements).filter((id) => !known.has(id))).toEqual([]);
    expect(covering.filter((c) => SCOPE_AREAS.includes(c.area)).map((c) => c.id)).toEqual([]);
    // Discovery: only the check that verifies an issued token with the key set takes any token.
    expect(catalog.filter((c) => c.area === 'discovery' && c.coveringTokens).map((c) => c.id)).toEqual(['discovery.jwks-verifies-access-tokens']);
  });

  test('marks every check of the list, and leaves the checks it was given as they were', () => {
    const a = defineCheck({ id: 'x.a', title: 'a', area: 'x', requirements: ['x.r'], level: 'MUST', run: async () => undefined });
    const b = defineCheck({ id: 'x.b', title: 'b', area: 'x', requirements: ['x.r'], level: 'MUST', run: async () => undefined });
    expect(coveringTokens([a, b]).map((c) => c.coveringTokens)).toEqual([true, true]);
    expect([a.coveringTokens, b.coveringTokens]).toEqual([undefined, undefined]);
  });
});
