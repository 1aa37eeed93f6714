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
    // The check about the scopes OpenAPI names keeps exact tokens (it uses none).
    expect(catalog.find((c) => c.id === 'discovery.openapi-service-scope')?.coveringTokens).toBeUndefined();
  });

  test('marks every check but the ones named, and refuses a name that is no check of the list', () => {
    const a = defineCheck({ id: 'x.a', title: 'a', area: 'x', requirements: ['x.r'], level: 'MUST', run: async () => undefined });
    const b = defineCheck({ id: 'x.b', title: 'b', area: 'x', requirements: ['x.r'], level: 'MUST', run: async () => undefined });
    expect(coveringTokens([a, b], ['x.b']).map((c) => c.coveringTokens)).toEqual([true, undefined]);
    expect(() => coveringTokens([a], ['x.c'])).toThrow('no check x.c to leave out');
  });
});
