/**
 * Helpers of the errors suite: error responses provoked once per run and
 * shared by the checks (read-only ones, and invalid writes). The rules of the
 * spec's error format are src/service/errors.ts.
 */
import { randomUUID } from 'node:crypto';
import type { CheckContext } from '../../src/engine/index.js';
import type { HttpResponse } from '../../src/http/index.js';
import { catalogCodeOf, firstIssue, isObject, minimalResource, pathOf, type ErrorSample } from '../../src/service/index.js';

/** One line per sample for observations: status, catalog code and issue code. */
export function summary(s: ErrorSample): { kind: string; status: number; code: string | null; issueCode: unknown } {
  return { kind: s.kind, status: s.res.status, code: catalogCodeOf(s.res) ?? null, issueCode: firstIssue(s.res)?.code ?? null };
}

function memo<T>(ctx: CheckContext, key: string, make: () => Promise<T>): Promise<T> {
  let p = ctx.shared.get(key) as Promise<T> | undefined;
  if (!p) ctx.shared.set(key, (p = make()));
  return p;
}

/** Errors every target can be asked for without writing: 401, 403, 404 (R4 and R5), 400. */
export function readOnlySamples(ctx: CheckContext): Promise<ErrorSample[]> {
  return memo(ctx, 'errors.read-only-samples', async () => {
    const mrRead = pathOf(ctx, 'R4', 'MedicationRequest', 'read');
    const mrSearch = pathOf(ctx, 'R4', 'MedicationRequest', 'search-type');
    const encRead = pathOf(ctx, 'R4', 'Encounter', 'read');
    const docRead = pathOf(ctx, 'R5', 'DocumentReference', 'read');
    const mrScope = ['system/MedicationRequest.rs'];
    const accept = { accept: 'application/fhir+json' };
    const fixtureRead = ctx.path(mrRead, { id: ctx.fixture('medicationRequest') });
    const samples: ErrorSample[] = [];
    const add = (kind: string, release: 'R4' | 'R5', res: HttpResponse) => samples.push({ kind, release, res });
    add('no-token', 'R4', await ctx.request({ url: fixtureRead, headers: accept }));
    add('invalid-token', 'R4', await ctx.request({ url: fixtureRead, headers: { ...accept, authorization: 'Bearer not-a-token' } }));
    add('insufficient-scope', 'R4', await ctx.fhir({ scopes: mrScope, url: ctx.path(encRead, { id: ctx.fixture('encounter') }) }));
    add('unknown-id', 'R4', await ctx.fhir({ scopes: mrScope, url: ctx.path(mrRead, { id: randomUUID() }) }));
    add('unknown-id-r5', 'R5', await ctx.fhir({ scopes: ['system/DocumentReference.rs'], url: ctx.path(docRead, { id: randomUUID() }) }));
    add('search-without-patient-or-encounter', 'R4', await ctx.fhir({ scopes: mrScope, url: `${mrSearch}?_count=1` }));
    return samples;
  });
}

/** Invalid MedicationRequest creates, one per kind of invalid body the catalog names (HPB-00101). */
export function invalidWriteSamples(ctx: CheckContext): Promise<ErrorSample[]> {
  return memo(ctx, 'errors.invalid-write-samples', async () => {
    const create = pathOf(ctx, 'R4', 'MedicationRequest', 'create');
    const valid = minimalResource(ctx, 'R4', 'MedicationRequest');
    const { subject: _subject, medicationCodeableConcept: _medication, ...withoutRequired } = valid;
    const bodies: Array<[string, string | Record<string, unknown>]> = [
      ['malformed-json', `${JSON.stringify(valid).slice(0, -1)},`],
      ['wrong-resource-type', { ...valid, resourceType: 'Encounter' }],
      ['missing-required-fields', withoutRequired],
      ['wrong-json-type', { ...valid, subject: `Patient/${ctx.fixture('patient')}` }],
    ];
    const samples: ErrorSample[] = [];
    for (const [kind, body] of bodies) {
      const res = await ctx.fhir({
        scopes: ['system/MedicationRequest.c'],
        method: 'POST',
        url: create,
        headers: { 'content-type': 'application/fhir+json' },
        body: typeof body === 'string' ? body : JSON.stringify(body),
        retry: 'none',
      });
      const id = isObject(res.json) && typeof res.json.id === 'string' ? res.json.id : undefined;
      if (res.status < 300 && id) ctx.created('MedicationRequest', id);
      samples.push({ kind, release: 'R4', res });
    }
    return samples;
  });
}
