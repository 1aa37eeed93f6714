/**
 * OpenAPI 3.0.3 component schemas of the resources, transcribed from the
 * spec's field tables ("Resources and their fields", "Other structures").
 * Structures the spec leaves unshown are plain objects/arrays; additional
 * properties stay allowed (FHIR resources carry more than the tables list).
 */

type Schema = Record<string, unknown>;

const obj = (description?: string): Schema => ({ type: 'object', ...(description ? { description } : {}) });
const arr = (description?: string): Schema => ({ type: 'array', items: { type: 'object' }, ...(description ? { description } : {}) });
const dateTime: Schema = { type: 'string', format: 'date-time' };

const Reference: Schema = {
  type: 'object',
  description: 'A reference `<ResourceType>/<uuid>` with an optional display.',
  required: ['reference'],
  properties: {
    reference: { type: 'string', pattern: '^[A-Za-z]+/[0-9a-fA-F-]{36}$' },
    display: { type: 'string' },
  },
};

const Coding: Schema = {
  type: 'object',
  properties: { system: { type: 'string' }, code: { type: 'string' }, display: { type: 'string' } },
};

const MedicationRequest: Schema = {
  type: 'object',
  required: ['resourceType', 'status', 'intent', 'medicationCodeableConcept', 'subject'],
  properties: {
    resourceType: { type: 'string', enum: ['MedicationRequest'] },
    id: { type: 'string', format: 'uuid' },
    meta: obj(),
    status: { type: 'string', description: 'Defaults to `active` on create. `unknown` is read-only.' },
    intent: { type: 'string', description: 'Always `order` on read; accepted and ignored on write.' },
    groupIdentifier: obj(),
    medicationCodeableConcept: obj('Medication code, system and display text.'),
    subject: { $ref: '#/components/schemas/Reference' },
    encounter: { $ref: '#/components/schemas/Reference' },
    requester: obj(),
    authoredOn: dateTime,
    reasonCode: arr(),
    dosageInstruction: arr(),
    dispenseRequest: obj(),
    substitution: obj(),
    note: arr(),
  },
};

/** Request body of create/update: `status` defaults to `active` when omitted, `intent` is ignored on write. */
const MedicationRequestWrite: Schema = {
  ...MedicationRequest,
  required: ['resourceType', 'medicationCodeableConcept', 'subject'],
};

const Encounter: Schema = {
  type: 'object',
  required: ['resourceType', 'status', 'class'],
  properties: {
    resourceType: { type: 'string', enum: ['Encounter'] },
    id: { type: 'string', format: 'uuid' },
    meta: obj(),
    status: { type: 'string', enum: ['planned', 'in-progress', 'finished', 'cancelled'] },
    class: { $ref: '#/components/schemas/Coding' },
    subject: { $ref: '#/components/schemas/Reference' },
    participant: {
      type: 'array',
      items: { type: 'object', properties: { individual: { $ref: '#/components/schemas/Reference' } } },
    },
    period: { type: 'object', properties: { start: dateTime, end: dateTime } },
    reasonCode: arr(),
    contained: arr('Condition (#condition-N), ClinicalImpression and CarePlan resources with stable local ids.'),
    diagnosis: arr('Each item references a contained Condition; rank 1 is primary.'),
  },
};

const Bundle: Schema = {
  type: 'object',
  required: ['resourceType', 'type', 'total', 'link', 'entry'],
  properties: {
    resourceType: { type: 'string', enum: ['Bundle'] },
    type: { type: 'string', enum: ['searchset'] },
    total: { type: 'integer', minimum: 0, description: 'Advisory; may drift while paging.' },
    link: {
      type: 'array',
      items: {
        type: 'object',
        required: ['relation', 'url'],
        properties: { relation: { type: 'string' }, url: { type: 'string' } },
      },
    },
    entry: { type: 'array', items: { type: 'object', properties: { fullUrl: { type: 'string' }, resource: { type: 'object' } } } },
  },
};

const OperationOutcome: Schema = {
  type: 'object',
  required: ['resourceType', 'issue'],
  properties: {
    resourceType: { type: 'string', enum: ['OperationOutcome'] },
    issue: {
      type: 'array',
      minItems: 1,
      items: {
        type: 'object',
        required: ['severity', 'code', 'diagnostics'],
        properties: {
          severity: { type: 'string' },
          code: { type: 'string', description: 'FHIR issue type (`invalid` for HPB-00101, `throttled` for HPB-00105).' },
          diagnostics: { type: 'string', description: '`<CODE>: <message>` when the error has a catalog code.' },
          details: {
            type: 'object',
            properties: { coding: { type: 'array', items: { $ref: '#/components/schemas/Coding' } } },
          },
        },
      },
    },
  },
};

/** `components.schemas` of the OpenAPI document. */
export const COMPONENT_SCHEMAS: Readonly<Record<string, Schema>> = {
  Reference,
  Coding,
  MedicationRequest,
  MedicationRequestWrite,
  Encounter,
  Bundle,
  OperationOutcome,
};

/** Component schema of a resource's write body (`<Resource>Write` where writes differ from reads). */
export function writeSchemaName(resource: string): string {
  return `${resource}Write` in COMPONENT_SCHEMAS ? `${resource}Write` : resource;
}
