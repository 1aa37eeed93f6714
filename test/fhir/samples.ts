import type { Release } from '../../src/fhir/index.js';

/** Hand-written minimal valid resources, plus realistic shapes from the spec. */
export type Sample = Record<string, unknown>;

const PATIENT_ID = '4f1c2a9e-0b7d-4c3e-9a51-2d8e6f7a1b20';
const PRACTITIONER_ID = '9b3e7c11-5a2f-4d8e-b6c0-1f2a3b4c5d6e';
const ENCOUNTER_ID = '2c8d4e6f-7a9b-4c1d-8e2f-3a4b5c6d7e8f';
const XHTML_DIV = '<div xmlns="http://www.w3.org/1999/xhtml">text</div>';

/** MedicationRequest with every field the spec lists. */
export function medicationRequest(id = 'a3f0c9d2-1b4e-4f6a-8c7d-9e0f1a2b3c4d'): Sample {
  return {
    resourceType: 'MedicationRequest',
    id,
    meta: { versionId: '3', lastUpdated: '2024-05-02T10:15:00.000Z' },
    status: 'active',
    intent: 'order',
    groupIdentifier: { system: 'urn:example:prescription', value: 'RX-1001' },
    medicationCodeableConcept: {
      coding: [{ system: 'http://www.nlm.nih.gov/research/umls/rxnorm', code: '197361', display: 'Amlodipine 5 MG Oral Tablet' }],
      text: 'Amlodipine 5 mg',
    },
    subject: { reference: `Patient/${PATIENT_ID}`, display: 'Ana López' },
    encounter: { reference: `Encounter/${ENCOUNTER_ID}` },
    requester: { reference: `Practitioner/${PRACTITIONER_ID}`, display: 'Dr. Ruiz' },
    authoredOn: '2024-05-02T10:00:00-06:00',
    reasonCode: [{ text: 'Hypertension' }],
    dosageInstruction: [
      {
        text: 'One tablet every 24 hours',
        timing: { repeat: { frequency: 1, period: 24, periodUnit: 'h' } },
        doseAndRate: [{ doseQuantity: { value: 1, unit: 'tablet' } }],
      },
    ],
    dispenseRequest: { quantity: { value: 30, unit: 'tablet' }, numberOfRepeatsAllowed: 2 },
    substitution: { allowedBoolean: true },
    note: [{ text: 'Take in the morning' }],
  };
}

/** Encounter read shape with the contained resources and `#condition-N` diagnoses the spec describes. */
export function encounterWithContained(): Sample {
  return {
    resourceType: 'Encounter',
    id: ENCOUNTER_ID,
    meta: { versionId: '1', lastUpdated: '2024-05-02T09:00:00Z' },
    status: 'finished',
    class: { system: 'http://terminology.hl7.org/CodeSystem/v3-ActCode', code: 'AMB', display: 'ambulatory' },
    subject: { reference: `Patient/${PATIENT_ID}`, display: 'Ana López' },
    participant: [{ individual: { reference: `Practitioner/${PRACTITIONER_ID}`, display: 'Dr. Ruiz' } }],
    period: { start: '2024-05-02T09:00:00-06:00', end: '2024-05-02T09:30:00-06:00' },
    reasonCode: [{ text: 'Headache' }],
    contained: [
      { resourceType: 'Condition', id: 'condition-1', code: { text: 'Essential hypertension' }, subject: { reference: `Patient/${PATIENT_ID}` } },
      { resourceType: 'Condition', id: 'condition-2', code: { text: 'Tension headache' }, subject: { reference: `Patient/${PATIENT_ID}` } },
      {
        resourceType: 'ClinicalImpression',
        id: 'subjective-objective-summary',
        status: 'completed',
        subject: { reference: `Patient/${PATIENT_ID}` },
        summary: 'Headache for three days; BP 150/95.',
      },
      {
        resourceType: 'ClinicalImpression',
        id: 'diagnostic-impression',
        status: 'completed',
        code: { coding: [{ system: 'http://loinc.org', code: '51848-0', display: 'Evaluation note' }] },
        subject: { reference: `Patient/${PATIENT_ID}` },
        summary: 'Uncontrolled hypertension.',
      },
      {
        resourceType: 'CarePlan',
        id: 'care-plan',
        status: 'active',
        intent: 'plan',
        subject: { reference: `Patient/${PATIENT_ID}` },
        description: 'Follow-up in two weeks.',
      },
    ],
    diagnosis: [
      { condition: { reference: '#condition-1' }, rank: 1 },
      { condition: { reference: '#condition-2' }, rank: 2 },
    ],
  };
}

export function searchsetBundle(resources: Sample[]): Sample {
  return {
    resourceType: 'Bundle',
    type: 'searchset',
    total: resources.length,
    link: [{ relation: 'self', url: 'https://fhir.example.test/fhir/R4/MedicationRequest?patient=x&_count=100' }],
    entry: resources.map((resource) => ({ fullUrl: `https://fhir.example.test/fhir/R4/${resource.resourceType}/${resource.id}`, resource })),
  };
}

function operationOutcome(): Sample {
  return {
    resourceType: 'OperationOutcome',
    issue: [
      {
        severity: 'error',
        code: 'invalid',
        diagnostics: 'HPB-00101: Validation error',
        details: { coding: [{ system: 'urn:example:catalog', code: 'HPB-00101' }] },
      },
    ],
  };
}

function patient(): Sample {
  return {
    resourceType: 'Patient',
    id: PATIENT_ID,
    identifier: [{ system: 'urn:example:curp', value: 'LOAA800101MDFPNN09' }],
    name: [{ use: 'official', family: 'López', given: ['Ana'] }],
    gender: 'female',
    birthDate: '1980-01-01',
  };
}

function capabilityStatement(fhirVersion: string): Sample {
  return {
    resourceType: 'CapabilityStatement',
    status: 'active',
    date: '2024-05-01',
    kind: 'instance',
    fhirVersion,
    format: ['json'],
    rest: [
      {
        mode: 'server',
        resource: [
          {
            type: 'MedicationRequest',
            interaction: [{ code: 'read' }, { code: 'search-type' }],
            searchParam: [{ name: 'patient', type: 'reference' }],
          },
        ],
      },
    ],
  };
}

function documentReference(): Sample {
  return {
    resourceType: 'DocumentReference',
    id: '7d6c5b4a-3f2e-4d1c-9b8a-7f6e5d4c3b2a',
    status: 'current',
    subject: { reference: `Patient/${PATIENT_ID}` },
    content: [{ attachment: { contentType: 'application/pdf', url: 'https://fhir.example.test/binary/1', title: 'Lab report' } }],
  };
}

/** One minimal valid resource per default type of each release. */
export const VALID: Record<Release, Record<string, () => Sample>> = {
  R4: {
    MedicationRequest: () => medicationRequest(),
    Encounter: () => encounterWithContained(),
    Bundle: () => searchsetBundle([medicationRequest()]),
    OperationOutcome: operationOutcome,
    CapabilityStatement: () => capabilityStatement('4.0.1'),
    Condition: () => ({ resourceType: 'Condition', code: { text: 'Hypertension' }, subject: { reference: `Patient/${PATIENT_ID}` } }),
    ClinicalImpression: () => ({ resourceType: 'ClinicalImpression', status: 'completed', subject: { reference: `Patient/${PATIENT_ID}` } }),
    CarePlan: () => ({ resourceType: 'CarePlan', status: 'active', intent: 'plan', subject: { reference: `Patient/${PATIENT_ID}` } }),
    Patient: patient,
    Practitioner: () => ({ resourceType: 'Practitioner', id: PRACTITIONER_ID, name: [{ family: 'Ruiz', prefix: ['Dr.'] }] }),
    DocumentReference: documentReference,
  },
  R5: {
    DocumentReference: documentReference,
    Bundle: () => searchsetBundle([patient()]),
    OperationOutcome: operationOutcome,
    CapabilityStatement: () => capabilityStatement('5.0.0'),
    Patient: patient,
  },
};

/** Required elements (besides `resourceType`) whose absence the schema reports, per type. */
export const REQUIRED_ELEMENT: Partial<Record<Release, Record<string, string>>> = {
  R4: {
    MedicationRequest: 'subject',
    Encounter: 'class',
    OperationOutcome: 'issue',
    Condition: 'subject',
    ClinicalImpression: 'subject',
    CarePlan: 'subject',
    DocumentReference: 'content',
  },
  R5: { DocumentReference: 'content', OperationOutcome: 'issue' },
};

export { XHTML_DIV };
