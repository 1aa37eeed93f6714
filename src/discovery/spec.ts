/**
 * Operations the spec states with their paths and scopes, for the surface the
 * target need not publish: the R5 DocumentReference interactions (spec: Endpoints >
 * DocumentReference (R5 surface); the discovery table names no R5 document, and
 * the OpenAPI description covers R4 only). Where the target publishes an
 * operation, the published one is used and any difference is reported; where it
 * publishes none (or no scope), the spec's is filled in with source `spec`.
 * `$upload` is listed by the spec without path or payload, so it has no entry here.
 * The R4 MedicationRequest and Encounter tables state the scope of every operation: a
 * published R4 operation without one (no `x-service-scope`, no CapabilityStatement scope)
 * gets the spec's, reported as a divergence (the OpenAPI document must carry it).
 */
import type { ModelOperation } from './model.js';
import { operationKey } from './merge.js';
import { resourcePath } from '../service/paths.js';
import { SCOPES } from '../service/scopes.js';
import { operationsFor } from '../service/api.js';

const DOCUMENT_REFERENCE = resourcePath('R5', 'DocumentReference');
const RS = SCOPES.DocumentReference.read[0];
const CRU = SCOPES.DocumentReference.update[0];

/** "Search parameters: patient (reference, UUID), type (token), category (token), date (date, ...), _count (number, ...), _offset (number)." */
const SEARCH_PARAMS = [
  { name: 'patient', type: 'reference' },
  { name: 'type', type: 'token' },
  { name: 'category', type: 'token' },
  { name: 'date', type: 'date' },
  { name: '_count', type: 'number' },
  { name: '_offset', type: 'number' },
];

function stated(
  interaction: ModelOperation['interaction'],
  method: string,
  path: string,
  scope: string,
  errorStatuses: number[],
  errorCodes: string[],
): ModelOperation {
  const short = interaction === 'search-type' ? 'search' : interaction;
  return {
    operationId: `DocumentReference.${short}`,
    release: 'R5',
    resource: 'DocumentReference',
    interaction,
    method,
    path,
    scope,
    searchParams: interaction === 'search-type' ? SEARCH_PARAMS.map((p) => ({ ...p })) : [],
    errorStatuses,
    errorCodes,
    sources: ['spec'],
  };
}

/**
 * "read (GET /fhir/R5/DocumentReference/{id}), search (GET /fhir/R5/DocumentReference), create
 * (POST /fhir/R5/DocumentReference), update (PUT /fhir/R5/DocumentReference/{id})"; scopes per
 * "Letters required per operation as shown: rs for read and search, cru for update (and for
 * Encounter and DocumentReference create)"; errors as the R4 tables they mirror, with HPB-00118.
 */
export function specStatedOperations(): ModelOperation[] {
  return [
    stated('read', 'GET', `${DOCUMENT_REFERENCE}/{id}`, RS, [401, 403, 404, 429], ['HPB-00102', 'HPB-00104', 'HPB-00105', 'HPB-00106', 'HPB-00118']),
    stated('search-type', 'GET', DOCUMENT_REFERENCE, RS, [401, 403, 429], ['HPB-00104', 'HPB-00105', 'HPB-00106']),
    stated('create', 'POST', DOCUMENT_REFERENCE, CRU, [400, 401, 403, 422, 429], ['HPB-00101', 'HPB-00104', 'HPB-00105', 'HPB-00106']),
    stated(
      'update',
      'PUT',
      `${DOCUMENT_REFERENCE}/{id}`,
      CRU,
      [400, 401, 403, 404, 422, 429],
      ['HPB-00101', 'HPB-00102', 'HPB-00104', 'HPB-00105', 'HPB-00106', 'HPB-00118'],
    ),
  ];
}

const SOURCE_NAMES: Record<string, string> = {
  openapi: 'the OpenAPI document',
  'capability-r4': 'the R4 CapabilityStatement',
  'capability-r5': 'the R5 CapabilityStatement',
};

function publishedBy(op: ModelOperation): string {
  return (
    op.sources
      .filter((s) => s !== 'spec')
      .map((s) => SOURCE_NAMES[s] ?? s)
      .join(' and ') || 'the target'
  );
}

/**
 * The published operations completed with the spec-stated ones: a stated
 * operation the target does not publish is added (source `spec`); a published
 * one without a scope gets the spec's (source `spec` added). Differences are
 * returned as divergences, the fill-ins as notes.
 */
export function withSpecStated(published: ModelOperation[]): { operations: ModelOperation[]; divergences: string[]; notes: string[] } {
  const operations = published.map((o) => ({ ...o, searchParams: [...o.searchParams], sources: [...o.sources] }));
  const divergences: string[] = [];
  const notes: string[] = [];
  for (const spec of specStatedOperations()) {
    const what = `${spec.release} ${spec.resource} ${spec.interaction}`;
    const same = operations.filter((o) => o.release === spec.release && o.resource === spec.resource && o.interaction === spec.interaction);
    if (same.length === 0) {
      const clash = operations.find((o) => operationKey(o) === operationKey(spec));
      if (clash) {
        divergences.push(
          `${what}: the spec states ${spec.method} ${spec.path}; ${publishedBy(clash)} publishes that path as ${clash.resource} ${clash.interaction}`,
        );
        continue;
      }
      operations.push(spec);
      notes.push(`${what}: not published; the spec's ${spec.method} ${spec.path} with ${spec.scope} is used`);
      continue;
    }
    for (const op of same) {
      const by = publishedBy(op);
      if (op.method !== spec.method || op.path !== spec.path) {
        divergences.push(`${what}: the spec states ${spec.method} ${spec.path}; ${by} publishes ${op.method} ${op.path}`);
      }
      if (!op.scope) {
        op.scope = spec.scope;
        op.sources.push('spec');
        notes.push(`${what}: ${by} publishes no scope; the spec's ${spec.scope} is used`);
      } else if (op.scope !== spec.scope) {
        divergences.push(`${what}: the spec states scope ${spec.scope}; ${by} publishes ${op.scope}`);
      }
      if (spec.interaction === 'search-type') {
        const names = new Set(op.searchParams.map((p) => p.name));
        const missing = spec.searchParams.filter((p) => !names.has(p.name));
        if (missing.length) {
          divergences.push(`${what}: the spec states search parameters ${missing.map((p) => p.name).join(', ')}, which ${by} does not publish`);
          op.searchParams.push(...missing);
        }
      }
    }
  }
  // The R4 endpoint tables' Scope column: the fallback for a published operation without a scope.
  const r4 = operationsFor('R4');
  for (const op of operations) {
    if (op.release !== 'R4' || op.scope) continue;
    const spec = r4.find((s) => s.resource === op.resource && s.interaction === op.interaction);
    if (!spec) continue;
    op.scope = spec.scope;
    op.sources.push('spec');
    divergences.push(
      `R4 ${op.resource} ${op.interaction}: no scope in ${publishedBy(op)} (the OpenAPI document must carry x-service-scope); the spec's ${spec.scope} is used`,
    );
  }
  return { operations, divergences, notes };
}
