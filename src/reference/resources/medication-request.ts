/**
 * MedicationRequest (R4): read, create, update, search (spec "MedicationRequest"
 * sections of Resources, States and Endpoints).
 */
import { randomUUID } from 'node:crypto';
import type { CodeableConcept, MedicationRequest, Reference } from 'fhir/r4.js';
import type { Handler, HandlerContext, HandlerResponse } from '../types.js';
import { FhirError } from '../types.js';
import { compact, detached } from './compact.js';
import type { ResourceEnv } from './env.js';
import { businessRule, conflict, invalid, notFound, unprocessable } from './errors.js';
import { schemaProblem } from './fhir-schema.js';
import { searchBundle, searchOrg } from './pagination.js';
import { assertPatientAcceptsData } from './patient-rules.js';
import { referencedRecord } from './references.js';
import type { MedicationRequestRow, PatientRow, PrescriptionRow } from './records.js';
import { uuidParam } from './search-params.js';
import { bodyLeniency } from '../faults/generated.js';
import { type Body, isUuid, referenceId, requireField, requireResource, requireSameId } from './validate.js';
import { checkIfMatch, firstVersion, header, metaOf, nextVersion, versionHeaders } from './versioning.js';

/** R4 MedicationRequest.status codes. `unknown` is read-only here. */
const FHIR_STATUSES = new Set(['active', 'on-hold', 'cancelled', 'completed', 'entered-in-error', 'stopped', 'draft', 'unknown']);
/** Reference choice: the parent prescription is emitted as groupIdentifier in this system. */
export const PRESCRIPTION_SYSTEM = 'https://clinical-records.example/fhir/NamingSystem/prescription';

const PATH = '/fhir/R4/MedicationRequest';

export function toMedicationRequest(row: MedicationRequestRow): MedicationRequest {
  return detached(
    compact({
      resourceType: 'MedicationRequest' as const,
      id: row.id,
      meta: metaOf(row),
      status: (FHIR_STATUSES.has(row.status) ? row.status : 'unknown') as MedicationRequest['status'],
      intent: 'order' as const,
      groupIdentifier: { system: PRESCRIPTION_SYSTEM, value: row.prescriptionId },
      medicationCodeableConcept: row.medication,
      // Absent only when a planted fault stored the record without a usable subject.
      subject: (row.subjectId === undefined ? undefined : { reference: `Patient/${row.subjectId}` }) as Reference,
      encounter: row.encounterId === undefined ? undefined : { reference: `Encounter/${row.encounterId}` },
      requester: row.requester,
      authoredOn: row.authoredOn,
      reasonCode: row.reasonCode,
      dosageInstruction: row.dosageInstruction as MedicationRequest['dosageInstruction'],
      dispenseRequest: row.dispenseRequest as MedicationRequest['dispenseRequest'],
      substitution: row.substitution as MedicationRequest['substitution'],
      note: row.note as MedicationRequest['note'],
    }),
  );
}

/** What a write body carries, after the structural checks. */
interface MedicationRequestBody {
  resource: Body;
  status?: string;
  /** Undefined only when a planted fault let an unusable subject through. */
  subjectId?: string;
  /** The FHIR-owned fields a write overlays (status apart). */
  owned: Pick<MedicationRequestRow, 'medication' | 'dosageInstruction' | 'dispenseRequest' | 'reasonCode' | 'note'>;
}

/** Structural checks (400 HPB-00101): resourceType, HL7 R4 schema, required fields, subject reference. */
/** Fault mr-write-drops-dosage-timing: dosage is stored as its text only (timing and dose silently dropped). */
function textOnlyDosage(dosage: unknown[] | undefined): unknown[] | undefined {
  return dosage?.map((d) => (typeof d === 'object' && d !== null && 'text' in d ? { text: (d as { text: unknown }).text } : d));
}

function parseBody(body: unknown, faults: ReadonlySet<string>, write: 'create' | 'update'): MedicationRequestBody {
  // Generated faults body-<rule>-accepted-<operation>: one rule of one field is not enforced, the field is stored as sent
  // (a subject that is not a usable reference names no patient: the create stores none, the update keeps the stored one).
  const lenient = bodyLeniency(faults, write === 'create' ? 'MedicationRequest.create' : 'MedicationRequest.update');
  const resource = requireResource(body, 'MedicationRequest', (v) => lenient.skips('resourceType', v));
  const medicationUnchecked = lenient.skips('medicationCodeableConcept', resource.medicationCodeableConcept);
  if (!faults.has('mr-medication-not-required') && !medicationUnchecked) requireField(resource, 'medicationCodeableConcept');
  if (resource.subject === undefined && faults.has('mr-missing-subject-404')) throw notFound('Patient', 'missing');
  const subjectUnchecked = lenient.skips('subject', resource.subject);
  const subjectId = subjectUnchecked ? undefined : referenceId(requireField(resource, 'subject'), 'Patient', 'subject');
  const unchecked = [...(medicationUnchecked ? ['medicationCodeableConcept'] : []), ...(subjectUnchecked ? ['subject'] : [])];
  const problem = write === 'update' && faults.has('mr-update-schema-unchecked') ? undefined : schemaProblem('R4', 'MedicationRequest', resource, unchecked);
  if (problem) throw invalid(`Body does not match the FHIR R4 schema: ${problem}`);
  return {
    resource,
    status: resource.status as string | undefined,
    subjectId,
    owned: {
      medication: resource.medicationCodeableConcept as CodeableConcept,
      dosageInstruction: faults.has('mr-write-drops-dosage-timing')
        ? textOnlyDosage(resource.dosageInstruction as unknown[] | undefined)
        : (resource.dosageInstruction as unknown[] | undefined),
      dispenseRequest: resource.dispenseRequest as Record<string, unknown> | undefined,
      reasonCode: resource.reasonCode as CodeableConcept[] | undefined,
      // Fault mr-create-drops-note: a create silently drops the notes.
      note: write === 'create' && faults.has('mr-create-drops-note') ? undefined : (resource.note as unknown[] | undefined),
    },
  };
}

export function medicationRequestHandlers(env: ResourceEnv): Record<string, Handler> {
  const { store, modes, faults } = env;
  /** Fault mr-intent-echoed: the intent last written per record. */
  const echoedIntents = new Map<string, string>();
  /** Fault mr-search-stale-version: the version each record was created with. */
  const firstVersions = new Map<string, MedicationRequestRow>();

  /** Semantic check of a written status: a FHIR code other than the read-only `unknown`. */
  function checkWritableStatus(status: string | undefined): void {
    if (status === 'unknown' && !faults.has('mr-unknown-status-writable'))
      throw unprocessable(modes.validationStatus, 'status unknown is read-only and cannot be written');
    if (status !== undefined && !FHIR_STATUSES.has(status)) {
      throw unprocessable(modes.validationStatus, `status ${JSON.stringify(status)} is not a MedicationRequest status`);
    }
  }

  /** The caller's patient the subject names (undefined in mode unresolvedReference=unchecked). */
  function existingPatient(org: string, id: string): PatientRow | undefined {
    return referencedRecord(env, store.patients, org, 'Patient', id, () => unprocessable(modes.validationStatus, `subject Patient/${id} does not exist`));
  }

  /** The patient's first draft prescription, or a new one (spec: created medications are linked to a draft prescription). */
  function draftPrescriptionFor(org: string, patientId: string): PrescriptionRow {
    const existing = store.prescriptions.all(org).find((p) => p.patientId === patientId && p.state === 'draft');
    return existing ?? newDraftPrescription(org, patientId);
  }

  function newDraftPrescription(org: string, patientId: string): PrescriptionRow {
    const created: PrescriptionRow = { id: randomUUID(), org, patientId, state: 'draft' };
    store.prescriptions.put(created);
    return created;
  }

  function respond(status: number, row: MedicationRequestRow, extra: Record<string, string> = {}): HandlerResponse {
    const body = toMedicationRequest(row);
    const echoed = echoedIntents.get(row.id);
    if (echoed !== undefined) body.intent = echoed as MedicationRequest['intent'];
    return { status, body, headers: { ...versionHeaders(row, modes, faults), ...extra } };
  }

  function echoIntent(id: string, resource: Body): void {
    if (faults.has('mr-intent-echoed') && typeof resource.intent === 'string') echoedIntents.set(id, resource.intent);
  }

  /** Faults mr-deceased-patient-accepted / mr-merged-patient-accepted switch off one patient rule each. */
  function patientRuleOff(patient: PatientRow): boolean {
    if (patient.deceased) return faults.has('mr-deceased-patient-accepted');
    return patient.mergedInto !== undefined && faults.has('mr-merged-patient-accepted');
  }

  const read: Handler = (ctx) => {
    const row = store.medicationRequests.get(ctx.caller.org, ctx.params.id ?? '');
    if (!row) throw notFound('MedicationRequest', ctx.params.id ?? '');
    return respond(200, row);
  };

  const create: Handler = (ctx) => {
    const org = ctx.caller.org;
    const body = parseBody(ctx.body, faults, 'create');
    checkWritableStatus(body.status);
    // No subject only under a planted fault: the record hangs from no patient.
    const patient = body.subjectId === undefined ? undefined : existingPatient(org, body.subjectId);
    const subjectId = patient?.id ?? body.subjectId;
    const { resource } = body;
    const encounterId = resource.encounter === undefined ? undefined : referenceId(resource.encounter, 'Encounter', 'encounter');
    if (encounterId !== undefined)
      referencedRecord(env, store.encounters, org, 'Encounter', encounterId, () =>
        unprocessable(modes.validationStatus, `encounter Encounter/${encounterId} does not exist`),
      );
    if (patient && !patientRuleOff(patient)) assertPatientAcceptsData(patient);
    const prescription = subjectId !== undefined ? draftPrescriptionFor(org, subjectId) : newDraftPrescription(org, '');
    const siblings = store.medicationRequests.all(org).filter((m) => m.prescriptionId === prescription.id).length;
    const row = store.insert(
      store.medicationRequests,
      compact({
        ...firstVersion(faults.has('mr-client-id-kept') && typeof resource.id === 'string' && isUuid(resource.id) ? resource.id : randomUUID(), org, ctx.now),
        status: body.status ?? (faults.has('mr-default-status-not-applied') ? 'draft' : 'active'),
        ...body.owned,
        subjectId,
        encounterId,
        requester: resource.requester as Reference | undefined,
        authoredOn: resource.authoredOn as string | undefined,
        substitution: resource.substitution as Record<string, unknown> | undefined,
        prescriptionId: prescription.id,
        app: { warnings: [], sortOrder: siblings },
      }),
    );
    echoIntent(row.id, resource);
    if (faults.has('mr-search-stale-version')) firstVersions.set(row.id, structuredClone(row));
    return respond(modes.createStatus, row, { Location: `${ctx.baseUrl}${PATH}/${row.id}` });
  };

  const update: Handler = (ctx) => {
    const org = ctx.caller.org;
    const id = ctx.params.id ?? '';
    const row = store.medicationRequests.get(org, id);
    if (!row) {
      // Fault tenancy-if-match-409-leak: the If-Match is compared with another organization's record of that id first.
      const foreign = faults.has('tenancy-if-match-409-leak') ? store.medicationRequests.values().find((r) => r.id === id) : undefined;
      if (foreign) checkIfMatch(ctx, foreign);
      throw notFound('MedicationRequest', id);
    }
    const body = parseBody(ctx.body, faults, 'update');
    requireSameId(body.resource, id);
    if (faults.has('if-match-current-refused') && header(ctx, 'if-match') !== undefined) throw conflict('HPB-00103', 'Version conflict');
    // Fault if-match-weak-form-refused: a weak validator never matches (strong comparison).
    if (faults.has('if-match-weak-form-refused') && /^\s*W\//.test(header(ctx, 'if-match') ?? '')) throw conflict('HPB-00103', 'Version conflict');
    if (!faults.has('stale-if-match-accepted')) {
      try {
        checkIfMatch(ctx, row);
      } catch (e) {
        // Fault stale-if-match-412: the HTTP default 412 instead of the spec's 409 HPB-00103.
        if (faults.has('stale-if-match-412') && e instanceof FhirError)
          throw new FhirError(412, 'conflict', 'Precondition Failed: If-Match does not match the current version');
        throw e;
      }
    }
    if (row.status === 'entered-in-error' && !faults.has('mr-entered-in-error-updatable'))
      throw businessRule('HPB-00140', 'Cannot modify a medication request in entered-in-error');
    const prescription = store.prescriptions.get(org, row.prescriptionId);
    if (prescription && prescription.state !== 'draft' && !faults.has('mr-signed-prescription-updatable')) {
      throw new FhirError(
        409,
        'conflict',
        `Signed or cancelled prescription cannot be modified (prescription is ${prescription.state})`,
        modes.signedPrescriptionCode,
      );
    }
    const subjectChangeAccepted = faults.has('mr-subject-change-accepted');
    // An update without a usable subject (planted fault only) keeps the stored one.
    if (body.subjectId !== undefined && body.subjectId !== row.subjectId && !subjectChangeAccepted)
      throw unprocessable(422, 'subject cannot be changed on update');
    checkWritableStatus(body.status);
    const patient = row.subjectId === undefined ? undefined : store.patients.get(org, row.subjectId);
    if (patient && modes.patientBlockOn === 'create-and-update') assertPatientAcceptsData(patient);
    // Merge (update rule 1): FHIR-owned fields are replaced by the body's (status kept when omitted),
    // app-only fields are preserved, every other field keeps its stored value.
    const updated: MedicationRequestRow = compact({
      ...row,
      ...(faults.has('version-id-not-bumped') ? { lastUpdated: new Date(ctx.now).toISOString() } : nextVersion(row, ctx.now)),
      status: body.status ?? row.status,
      ...(faults.has('mr-overlay-ignored') ? {} : body.owned),
      ...(subjectChangeAccepted && body.subjectId !== undefined ? { subjectId: body.subjectId } : {}),
      // Fault mr-update-loses-prescription-group: the update re-links the record to a new draft prescription.
      ...(faults.has('mr-update-loses-prescription-group') ? { prescriptionId: newDraftPrescription(org, row.subjectId ?? '').id } : {}),
    });
    // Fault mr-update-drops-zero-values: an update loses the dispenseRequest members whose value is 0 (a falsy-value bug).
    if (faults.has('mr-update-drops-zero-values') && updated.dispenseRequest)
      updated.dispenseRequest = Object.fromEntries(Object.entries(updated.dispenseRequest).filter(([, v]) => v !== 0));
    store.medicationRequests.put(updated);
    echoIntent(id, body.resource);
    return respond(modes.updateStatus, updated);
  };

  const search: Handler = (ctx: HandlerContext) => {
    const patient = uuidParam(ctx.query, 'patient', 'Patient');
    const encounter = uuidParam(ctx.query, 'encounter', 'Encounter');
    if (patient === undefined && encounter === undefined && !env.faults.has('pagination-mr-search-without-patient-accepted')) {
      throw invalid('At least one of patient or encounter must be supplied');
    }
    // Fault tenancy-encounter-search-leak: a search by encounter alone looks in every organization.
    const encounterLeak = faults.has('tenancy-encounter-search-leak') && patient === undefined;
    const matches = (encounterLeak ? store.medicationRequests.values() : store.medicationRequests.all(searchOrg(env.paging, ctx))).filter(
      (row) =>
        (patient === undefined || faults.has('mr-search-patient-ignored') || row.subjectId === patient) &&
        (encounter === undefined ||
          faults.has('mr-search-encounter-ignored') ||
          // Fault mr-search-encounter-ignored-with-patient: encounter is dropped when patient is given too.
          (patient !== undefined && faults.has('mr-search-encounter-ignored-with-patient')) ||
          row.encounterId === encounter),
    );
    return searchBundle(env.paging, {
      ctx,
      matches,
      allowOffset: false,
      toResource: (row) => {
        const resource = toMedicationRequest(faults.has('mr-search-stale-version') ? (firstVersions.get(row.id) ?? row) : row);
        // Fault mr-search-raw-status: search entries show the stored status where the read shows `unknown`.
        return faults.has('mr-search-raw-status') ? ({ ...resource, status: row.status } as typeof resource) : resource;
      },
      fullUrl: (row) => `${ctx.baseUrl}${PATH}/${row.id}`,
    });
  };

  return {
    'MedicationRequest.read': read,
    'MedicationRequest.create': create,
    'MedicationRequest.update': update,
    'MedicationRequest.search': search,
  };
}
