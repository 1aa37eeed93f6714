/**
 * Encounter (R4): read, create, update, search (spec "Encounter" sections of
 * Resources, States and Endpoints, and the catalog rules HPB-00108/00109,
 * HPB-00138, HPB-00139, HPB-00141, HPB-00142).
 */
import { randomUUID } from 'node:crypto';
import type { CodeableConcept, Coding, Encounter, FhirResource, Reference } from 'fhir/r4.js';
import type { Handler, HandlerContext, HandlerResponse } from '../types.js';
import { compact, detached } from './compact.js';
import type { ResourceEnv } from './env.js';
import { referencedRecord } from './references.js';
import { businessRule, conflict, forbidden, invalid, notFound, unprocessable } from './errors.js';
import { schemaProblem } from './fhir-schema.js';
import { searchQueryUnderFaults } from '../faults/encounter.js';
import { bodyLeniency } from '../faults/generated.js';
import { searchBundle } from './pagination.js';
import { assertNormativaComplete, assertPatientAcceptsData } from './patient-rules.js';
import type { DiagnosisKind, EncounterRow, RecordMeta } from './records.js';
import { codingMatches, dateMatches, dateParams, tokenParam, uuidParam } from './search-params.js';
import { type Body, referenceId, requireField, requireResource, requireSameId } from './validate.js';
import { checkIfMatch, firstVersion, metaOf, nextVersion, versionHeaders } from './versioning.js';

export const ENCOUNTER_STATUSES = ['planned', 'in-progress', 'finished', 'cancelled'] as const;
/** Contained ids the service emits (spec "Contained resources emitted by the service"). */
export const SUMMARY_ID = 'subjective-objective-summary';
export const IMPRESSION_ID = 'diagnostic-impression';
export const CARE_PLAN_ID = 'care-plan';
export const DIAGNOSTIC_IMPRESSION_CODING = { system: 'http://loinc.org', code: '51848-0', display: 'Evaluation note' };

const PATH = '/fhir/R4/Encounter';
const DAY_MS = 86_400_000;

/** `diagnosisOrder`: the array order of Encounter.diagnosis (ranks do not depend on it). */
export function toEncounter(row: EncounterRow, diagnosisOrder: 'stored' | 'reversed' = 'stored'): Encounter {
  const subject: Reference | undefined = row.subjectId === undefined ? undefined : { reference: `Patient/${row.subjectId}` };
  const contained: FhirResource[] = [];
  const diagnosis: NonNullable<Encounter['diagnosis']> = [];
  // Contained resources need a subject (Condition, ClinicalImpression and CarePlan require one); writes ensure it.
  if (subject) {
    let nextSecondaryRank = 2;
    row.diagnoses.forEach((d, i) => {
      const id = `condition-${i + 1}`;
      contained.push({ resourceType: 'Condition', id, subject, code: d.code });
      const rank = d.kind === 'primary' ? 1 : d.kind === 'secondary' ? nextSecondaryRank++ : undefined;
      diagnosis.push(compact({ condition: { reference: `#${id}` }, rank }));
    });
    if (diagnosisOrder === 'reversed') diagnosis.reverse();
    const { subjectiveObjective, diagnosticImpression, carePlan } = row.summaries;
    if (subjectiveObjective !== undefined) {
      contained.push({ resourceType: 'ClinicalImpression', id: SUMMARY_ID, status: 'completed', subject, summary: subjectiveObjective });
    }
    if (diagnosticImpression !== undefined) {
      contained.push({
        resourceType: 'ClinicalImpression',
        id: IMPRESSION_ID,
        status: 'completed',
        subject,
        code: { coding: [DIAGNOSTIC_IMPRESSION_CODING] },
        summary: diagnosticImpression,
      });
    }
    if (carePlan !== undefined) {
      contained.push({ resourceType: 'CarePlan', id: CARE_PLAN_ID, status: 'active', intent: 'plan', subject, description: carePlan });
    }
  }
  return detached(
    compact({
      resourceType: 'Encounter' as const,
      id: row.id,
      meta: metaOf(row),
      contained,
      status: row.status as Encounter['status'],
      class: row.class,
      subject,
      participant: row.participants.map((p) => ({ individual: compact({ reference: `Practitioner/${p.practitionerId}`, display: p.display }) })),
      period: row.period,
      reasonCode: row.reasonCode,
      diagnosis,
      appointment: row.appointmentId === undefined ? undefined : [{ reference: `Appointment/${row.appointmentId}` }],
      serviceProvider: row.serviceProviderId === undefined ? undefined : { reference: `Organization/${row.serviceProviderId}` },
    }),
  );
}

type EncounterFields = Omit<EncounterRow, keyof RecordMeta>;

/** `10:15:00+02:00` -> `10:15:00+01:00`, `Z` -> `-01:00`: the same wall clock, an instant an hour later. */
function zoneMovedWest(value: string): string {
  const m = /(Z|([+-])(\d{2}):(\d{2}))$/.exec(value);
  if (!m) return value;
  const minutes = m[1] === 'Z' ? 0 : (m[2] === '-' ? -1 : 1) * (Number(m[3]) * 60 + Number(m[4]));
  const moved = minutes - 60;
  const abs = Math.abs(moved);
  const zone = `${moved < 0 ? '-' : '+'}${String(Math.floor(abs / 60)).padStart(2, '0')}:${String(abs % 60).padStart(2, '0')}`;
  return value.slice(0, m.index) + zone;
}

function sameInstant(a: string | undefined, b: string | undefined): boolean {
  return a === b || (a !== undefined && b !== undefined && Date.parse(a) === Date.parse(b));
}

const isPeriod = (v: unknown): v is { start?: string; end?: string } => typeof v === 'object' && v !== null && !Array.isArray(v);

export function encounterHandlers(env: ResourceEnv): Record<string, Handler> {
  const { store, modes, limits } = env;
  const semantic = (message: string) => unprocessable(modes.validationStatus, message);
  const render = (row: EncounterRow) => toEncounter(row, modes.diagnosisOrder);
  /** Fault encounter-search-stale-version: the version each record was created with. */
  const firstVersions = new Map<string, EncounterRow>();

  /** Structural (400) then semantic (validationStatus) checks of a write body; the stored fields it describes. */
  function parseBody(body: unknown, org: string, operationId: 'Encounter.create' | 'Encounter.update'): { resource: Body; fields: EncounterFields } {
    // Generated faults body-<rule>-accepted-<operation>: one rule of one field is not enforced, the field is stored as sent.
    const lenient = bodyLeniency(env.faults, operationId);
    const resource = requireResource(body, 'Encounter', (v) => lenient.skips('resourceType', v));
    const statusUnchecked = lenient.skips('status', resource.status);
    if (!statusUnchecked && typeof requireField(resource, 'status') !== 'string') throw invalid('status must be a string');
    const classUnchecked = lenient.skips('class', resource.class);
    const klass = (classUnchecked ? resource.class : requireField(resource, 'class')) as Coding;
    if (!classUnchecked && (typeof klass !== 'object' || typeof klass.code !== 'string')) throw invalid('class must be a Coding with a code');
    const unchecked = [...(statusUnchecked ? ['status'] : []), ...(classUnchecked ? ['class'] : [])];
    const problem = schemaProblem('R4', 'Encounter', resource, unchecked);
    if (problem) throw invalid(`Body does not match the FHIR R4 schema: ${problem}`);
    const contained = (resource.contained ?? []) as Array<Body & { resourceType: string; id?: string }>;
    for (const item of contained) {
      if (!['Condition', 'ClinicalImpression', 'CarePlan'].includes(item.resourceType)) {
        throw semantic(`contained ${item.resourceType} is not supported (Condition, ClinicalImpression, CarePlan)`);
      }
      const itemProblem = schemaProblem('R4', item.resourceType, item);
      if (itemProblem) throw invalid(`contained resource does not match the FHIR R4 schema: ${itemProblem}`);
    }
    const subjectId = resource.subject === undefined ? undefined : referenceId(resource.subject, 'Patient', 'subject');
    const participants = ((resource.participant ?? []) as Array<{ individual?: Reference }>).map((p, i) => ({
      practitionerId: referenceId(p.individual, 'Practitioner', `participant[${i}].individual`),
      display: p.individual?.display,
    }));
    // Fault encounter-write-keeps-first-participant: participants after the first are silently dropped.
    if (env.faults.has('encounter-write-keeps-first-participant')) participants.splice(1);
    // Fault encounter-write-drops-period-end: period.end is silently dropped.
    let period =
      env.faults.has('encounter-write-drops-period-end') && isPeriod(resource.period) ? compact({ ...resource.period, end: undefined }) : resource.period;
    // Fault encounter-period-start-shifted-hour: the wall-clock time is kept, the offset moved an hour west.
    if (env.faults.has('encounter-period-start-shifted-hour') && isPeriod(period) && typeof period.start === 'string')
      period = { ...period, start: zoneMovedWest(period.start) };
    const appointments = ((resource.appointment ?? []) as Reference[]).map((a, i) => referenceId(a, 'Appointment', `appointment[${i}]`));
    const serviceProviderId = resource.serviceProvider === undefined ? undefined : referenceId(resource.serviceProvider, 'Organization', 'serviceProvider');

    if (!statusUnchecked && !(ENCOUNTER_STATUSES as readonly string[]).includes(resource.status as string)) {
      throw semantic(`status must be one of ${ENCOUNTER_STATUSES.join(', ')}`);
    }
    if (subjectId !== undefined)
      referencedRecord(env, store.patients, org, 'Patient', subjectId, () => semantic(`subject Patient/${subjectId} does not exist`));
    for (const p of participants) {
      referencedRecord(env, store.practitioners, org, 'Practitioner', p.practitionerId, () =>
        semantic(`participant Practitioner/${p.practitionerId} does not exist`),
      );
    }
    if (appointments.length > 1) throw semantic('at most one appointment may be referenced');
    const appointmentId = appointments[0];
    if (appointmentId !== undefined && !store.appointments.get(org, appointmentId)) throw semantic(`appointment Appointment/${appointmentId} does not exist`);
    if (serviceProviderId !== undefined && !store.clinics.get(org, serviceProviderId))
      throw semantic(`serviceProvider Organization/${serviceProviderId} does not exist`);
    const { diagnoses, summaries } = parseContained(resource, contained);
    if (contained.length > 0 && subjectId === undefined) throw semantic('contained resources and diagnoses need a subject');

    return {
      resource,
      fields: {
        ...compact({
          status: resource.status as string,
          class: klass,
          subjectId,
          period: period as EncounterRow['period'],
          reasonCode: resource.reasonCode as CodeableConcept[] | undefined,
          appointmentId,
          serviceProviderId,
        }),
        participants: participants.map((p) => compact(p)),
        diagnoses,
        summaries,
      },
    };
  }

  /** Diagnoses (ranked per the spec) and summaries from `diagnosis[]` and the contained resources they use. */
  function parseContained(resource: Body, contained: Array<Body & { resourceType: string; id?: string }>): Pick<EncounterFields, 'diagnoses' | 'summaries'> {
    const byId = new Map(contained.map((c) => [`#${c.id ?? ''}`, c]));
    const position = new Map(contained.map((c, i) => [`#${c.id ?? ''}`, i]));
    const used = new Set<string>();
    const ranked = ((resource.diagnosis ?? []) as Array<{ condition?: Reference; rank?: number }>).map((d, i) => {
      const ref = d.condition?.reference ?? '';
      const condition = byId.get(ref);
      if (condition?.resourceType !== 'Condition') throw semantic(`diagnosis[${i}].condition must reference a contained Condition (#id)`);
      used.add(ref);
      const kind: DiagnosisKind = d.rank === undefined ? 'unspecified' : d.rank === 1 ? 'primary' : 'secondary';
      return { kind, rank: d.rank ?? 0, order: position.get(ref)!, code: (condition.code ?? { text: 'Unspecified' }) as CodeableConcept };
    });
    if (ranked.filter((d) => d.kind === 'primary').length > 1) throw semantic('only one diagnosis may have rank 1');
    // Stored order: the primary first, then the order of the contained Conditions with the secondaries placed by
    // rank in their slots, so local ids stay stable through a PUT of the Encounter as read (whatever the order of
    // diagnosis[]: the rendering is already in that order).
    const inPlace = [...ranked].sort((a, b) => Number(b.kind === 'primary') - Number(a.kind === 'primary') || a.order - b.order);
    const secondaries = inPlace.filter((d) => d.kind === 'secondary').sort((a, b) => a.rank - b.rank || a.order - b.order);
    const diagnoses = inPlace.map((d) => (d.kind === 'secondary' ? secondaries.shift()! : d)).map(({ kind, code }) => ({ kind, code }));

    const summaries: EncounterFields['summaries'] = {};
    const text = (id: string, type: string, field: string): string | undefined => {
      const item = byId.get(`#${id}`);
      if (!item) return undefined;
      if (item.resourceType !== type || typeof item[field] !== 'string') throw semantic(`contained #${id} must be a ${type} with ${field}`);
      used.add(`#${id}`);
      return item[field] as string;
    };
    summaries.subjectiveObjective = text(SUMMARY_ID, 'ClinicalImpression', 'summary');
    summaries.diagnosticImpression = text(IMPRESSION_ID, 'ClinicalImpression', 'summary');
    summaries.carePlan = text(CARE_PLAN_ID, 'CarePlan', 'description');
    const unused = contained.find((c) => !used.has(`#${c.id ?? ''}`));
    if (unused) throw semantic(`contained ${unused.resourceType} #${unused.id ?? ''} is neither a diagnosis nor a known summary`);
    return { diagnoses, summaries: compact(summaries) };
  }

  /** period.start within ±registrationWindowDays of now (422 HPB-00139). */
  function checkRegistrationWindow(fields: EncounterFields, now: number): void {
    const start = fields.period?.start;
    if (start === undefined) return;
    const offset = Date.parse(start) - now;
    // Fault encounter-far-future-accepted: only dates in the past are held to the window.
    if (offset > 0 && env.faults.has('encounter-far-future-accepted')) return;
    if (Math.abs(offset) > limits.registrationWindowDays * DAY_MS) {
      throw businessRule('HPB-00139', `Encounter date outside the allowed registration window (±${limits.registrationWindowDays} days)`);
    }
  }

  /** An appointment with an active (in-progress) encounter refuses another (409 HPB-00138). */
  function checkAppointmentFree(org: string, fields: EncounterFields, selfId?: string): void {
    if (fields.appointmentId === undefined) return;
    const active = store.encounters.all(org).some((e) => e.appointmentId === fields.appointmentId && e.status === 'in-progress' && e.id !== selfId);
    if (active && !env.faults.has('encounter-appointment-conflict-not-enforced')) throw conflict('HPB-00138', 'Appointment already has an active encounter');
  }

  function respond(status: number, row: EncounterRow, extra: Record<string, string> = {}): HandlerResponse {
    // Fault encounter-etag-stuck-from-third-version: the ETag stays at version 2 once the Encounter has a third version.
    const tagged = env.faults.has('encounter-etag-stuck-from-third-version') && row.versionId > 2 ? { ...row, versionId: 2 } : row;
    return { status, body: render(row), headers: { ...versionHeaders(tagged, modes, env.faults, 'other'), ...extra } };
  }

  /** The caller's row; planted tenancy faults also find another organization's. */
  function findRow(org: string, id: string, leak: 'tenancy-read-leak' | 'tenancy-update-leak'): EncounterRow | undefined {
    return store.encounters.get(org, id) ?? (env.faults.has(leak) ? store.encounters.values().find((r) => r.id === id) : undefined);
  }

  const read: Handler = (ctx) => {
    const row = findRow(ctx.caller.org, ctx.params.id ?? '', 'tenancy-read-leak');
    if (!row) throw notFound('Encounter', ctx.params.id ?? '');
    return respond(200, row);
  };

  const create: Handler = (ctx) => {
    const org = ctx.caller.org;
    const { fields } = parseBody(ctx.body, org, 'Encounter.create');
    checkRegistrationWindow(fields, ctx.now);
    checkAppointmentFree(org, fields);
    const patient = fields.subjectId === undefined ? undefined : store.patients.get(org, fields.subjectId);
    if (patient) {
      // Fault encounter-deceased-patient-accepted: an Encounter for a deceased patient is created (MedicationRequests are still refused).
      if (!(patient.deceased && env.faults.has('encounter-deceased-patient-accepted'))) assertPatientAcceptsData(patient);
      if (!env.faults.has('encounter-normativa-not-enforced')) assertNormativaComplete(patient);
    }
    const clinic = fields.serviceProviderId === undefined ? undefined : store.clinics.get(org, fields.serviceProviderId);
    if (clinic && !clinic.normativaConfigured) {
      throw forbidden('HPB-00141', 'A clinic configured for the normativa must be selected before starting a consultation');
    }
    const row = store.insert(store.encounters, { ...firstVersion(randomUUID(), org, ctx.now), ...fields });
    if (env.faults.has('encounter-search-stale-version')) firstVersions.set(row.id, structuredClone(row));
    return respond(modes.createStatus, row, { Location: `${ctx.baseUrl}${PATH}/${row.id}` });
  };

  const update: Handler = (ctx) => {
    const org = ctx.caller.org;
    const id = ctx.params.id ?? '';
    const row = findRow(org, id, 'tenancy-update-leak');
    // Fault tenancy-if-match-409-leak-encounter: the If-Match is compared with another organization's Encounter of that id.
    const foreign = !row && env.faults.has('tenancy-if-match-409-leak-encounter') ? store.encounters.values().find((r) => r.id === id) : undefined;
    if (foreign) checkIfMatch(ctx, foreign);
    if (!row) throw notFound('Encounter', id);
    const { resource, fields } = parseBody(ctx.body, org, 'Encounter.update');
    requireSameId(resource, id);
    checkIfMatch(ctx, row, modes.staleIfMatchOtherTypes);
    // Compared as instants: the same start spelled at another offset or precision is no new date.
    if (!sameInstant(fields.period?.start, row.period?.start)) checkRegistrationWindow(fields, ctx.now);
    checkAppointmentFree(org, fields, id);
    const patient = fields.subjectId === undefined ? undefined : store.patients.get(org, fields.subjectId);
    if (patient && modes.patientBlockOn === 'create-and-update') assertPatientAcceptsData(patient);
    // An update replaces every stored field with the body's.
    const updated: EncounterRow = { id, org, seq: row.seq, createdAt: row.createdAt, ...nextVersion(row, ctx.now), ...fields };
    // Fault encounter-update-drops-reason: an update loses reasonCode.
    if (env.faults.has('encounter-update-drops-reason')) delete updated.reasonCode;
    // Fault encounter-update-drops-summaries: an update keeps the diagnoses and loses the contained summaries and care plan.
    if (env.faults.has('encounter-update-drops-summaries')) updated.summaries = {};
    store.encounters.put(updated);
    return respond(modes.updateStatus, updated);
  };

  const search: Handler = (ctx: HandlerContext) => {
    const query = searchQueryUnderFaults(ctx.query, env.faults, 'encounter');
    const ids = tokenParam(query, '_id')?.map((t) => t.code);
    const patient = uuidParam(query, 'patient', 'Patient');
    const practitioner = uuidParam(query, 'practitioner', 'Practitioner');
    const dates = dateParams(query);
    const statuses = tokenParam(query, 'status')?.map((t) => t.code);
    if (statuses?.some((s) => !(ENCOUNTER_STATUSES as readonly string[]).includes(s))) {
      throw invalid(`status must be among ${ENCOUNTER_STATUSES.join(', ')}`);
    }
    const classes = tokenParam(query, 'class');
    // Fault tenancy-attribute-search-leak: a search naming no patient, practitioner or id looks in every organization.
    const byAttributes = patient === undefined && practitioner === undefined && ids === undefined;
    const rows =
      env.faults.has('tenancy-search-leak') || (byAttributes && env.faults.has('tenancy-attribute-search-leak'))
        ? store.encounters.values()
        : store.encounters.all(ctx.caller.org);
    const matches = rows.filter(
      (row) =>
        (ids === undefined || ids.includes(row.id)) &&
        (patient === undefined || row.subjectId === patient) &&
        (practitioner === undefined || row.participants.some((p) => p.practitionerId === practitioner)) &&
        // Fault encounter-search-date-ignored-with-status: date is dropped when status is given too.
        (dateMatches(row.period?.start, dates) || (statuses !== undefined && env.faults.has('encounter-search-date-ignored-with-status'))) &&
        (statuses === undefined || statuses.includes(row.status)) &&
        (classes === undefined || codingMatches(row.class ?? {}, classes)),
    );
    return searchBundle(env.paging, {
      ctx,
      matches,
      allowOffset: false,
      toResource: (row) => {
        const rendered = render(env.faults.has('encounter-search-stale-version') ? (firstVersions.get(row.id) ?? row) : row);
        // Fault encounter-search-drops-care-plan: search entries lack the contained #care-plan (reads keep it).
        if (env.faults.has('encounter-search-drops-care-plan')) rendered.contained = rendered.contained?.filter((c) => c.resourceType !== 'CarePlan');
        return rendered;
      },
      fullUrl: (row) => `${ctx.baseUrl}${PATH}/${row.id}`,
    });
  };

  return {
    'Encounter.read': read,
    'Encounter.create': create,
    'Encounter.update': update,
    'Encounter.search': search,
  };
}
