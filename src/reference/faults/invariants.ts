/** Faults the run-wide invariants catch (suites/invariants): a response that breaks a rule every exchange must keep. */
import { onPath, opIs, type Json } from './edit.js';
import type { FaultDef } from './types.js';

export const faults: FaultDef[] = [
  {
    name: 'medication-request-subject-as-string',
    area: 'invariants',
    violates: ['general.fhir-json-resources'],
    symptom: 'MedicationRequest reads carry subject as a bare string, which is not valid FHIR R4.',
    checks: ['invariants.fhir-json-resources'],
    transformResponse: onPath(opIs('MedicationRequest.read'), (b) => ({ ...b, subject: (b.subject as Json | undefined)?.reference ?? 'Patient' })),
  },
];
