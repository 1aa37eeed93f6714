/**
 * Mode `r4Observation=writes`: Observation on R4 (not in the spec), as a server may publish a
 * resource type besides the spec's, with read, create and update. Bodies are held to the HL7 FHIR
 * R4 schema and the profile its CapabilityStatement names (400 HPB-00101); the subject, when a Patient, must be one of the caller's organization
 * (422 HPB-00101). Records are the organization's own: another organization's id is 404 HPB-00102.
 */
import { randomUUID } from 'node:crypto';
import type { Handler, HandlerContext, HandlerResponse } from '../types.js';
import type { ResourceEnv } from './env.js';
import { invalid, notFound, unprocessable } from './errors.js';
import { OBSERVATION_PROFILE_REQUIRED } from '../discovery.js';
import { schemaProblem } from './fhir-schema.js';
import type { RecordMeta } from './records.js';
import { type Body, isUuid, requireResource, requireSameId } from './validate.js';
import { checkIfMatch, firstVersion, metaOf, nextVersion, versionHeaders } from './versioning.js';

interface ObservationRow extends RecordMeta {
  /** The resource as written, without id and meta. */
  fields: Body;
}

const PATH = '/fhir/R4/Observation';

export function observationHandlers(env: ResourceEnv): Record<string, Handler> {
  const rows = new Map<string, ObservationRow>();
  let seq = 0;
  const key = (org: string, id: string) => `${org} ${id.toLowerCase()}`;

  const toResource = (row: ObservationRow) => ({ resourceType: 'Observation', id: row.id, meta: metaOf(row), ...row.fields });
  const respond = (status: number, row: ObservationRow, extra: Record<string, string> = {}): HandlerResponse => ({
    status,
    body: toResource(row),
    headers: { ...versionHeaders(row, env.modes), ...extra },
  });
  const find = (ctx: HandlerContext): ObservationRow => {
    const id = ctx.params.id ?? '';
    const row = rows.get(key(ctx.caller.org, id));
    if (!row) throw notFound('Observation', id);
    return row;
  };
  const parse = (ctx: HandlerContext, org: string): Body => {
    const resource = requireResource(ctx.body, 'Observation');
    const problem = schemaProblem('R4', 'Observation', resource, ['meta']);
    if (problem) throw invalid(problem);
    // The profile the CapabilityStatement names (served as a StructureDefinition): its required elements.
    for (const element of OBSERVATION_PROFILE_REQUIRED) {
      const present = element.endsWith('[x]') ? Object.keys(resource).some((k) => k.startsWith(element.slice(0, -3))) : resource[element] !== undefined;
      if (!present) throw invalid(`Observation.${element} is required by the profile the CapabilityStatement names`);
    }
    const { resourceType: _t, id: _id, meta: _meta, ...fields } = resource;
    const subject = (fields.subject as { reference?: unknown } | undefined)?.reference;
    const match = typeof subject === 'string' ? /^Patient\/(.+)$/.exec(subject) : null;
    if (match && (!isUuid(match[1]!) || !env.store.patients.get(org, match[1]!.toLowerCase())))
      throw unprocessable(env.modes.validationStatus, `subject ${subject} is not a patient of this organization`);
    return fields;
  };

  return {
    'R4Observation.read': (ctx) => respond(200, find(ctx)),
    'R4Observation.create': (ctx) => {
      const org = ctx.caller.org;
      const fields = parse(ctx, org);
      const row: ObservationRow = { ...firstVersion(randomUUID(), org, ctx.now), seq: ++seq, fields };
      rows.set(key(org, row.id), row);
      return respond(env.modes.createStatus, row, { Location: `${ctx.baseUrl}${PATH}/${row.id}` });
    },
    'R4Observation.update': (ctx) => {
      const row = find(ctx);
      requireSameId(requireResource(ctx.body, 'Observation'), row.id);
      checkIfMatch(ctx, row);
      const fields = parse(ctx, row.org);
      const updated: ObservationRow = { ...row, ...nextVersion(row, ctx.now), fields };
      rows.set(key(row.org, row.id), updated);
      return respond(env.modes.updateStatus, updated);
    },
  };
}
