/**
 * Faults of the tenancy area: another organization's Encounter becomes visible
 * (read, search) or reachable (update). The guards live in the Encounter handlers.
 */
import type { FaultDef } from './types.js';

export const faults: FaultDef[] = [
  {
    name: 'tenancy-read-leak',
    area: 'tenancy',
    violates: ['tenancy.foreign-id-404'],
    symptom: "An Encounter read by id answers another organization's Encounter.",
  },
  {
    name: 'tenancy-update-leak',
    area: 'tenancy',
    violates: ['tenancy.foreign-id-404'],
    symptom: "An Encounter update of another organization's id is processed (no 404).",
  },
  {
    name: 'tenancy-search-leak',
    area: 'tenancy',
    violates: ['tenancy.resources-belong-to-org'],
    symptom: "Encounter search returns other organizations' Encounters.",
  },
];
