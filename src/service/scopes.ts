/**
 * The service's scopes (spec "Authentication" > "Using a token"): `system/<ResourceType>.<letters>`;
 * each operation requires the letters its endpoint table shows (`rs` to read and search,
 * `cru` to create and update, and `c` for a MedicationRequest create). How held letters
 * cover an operation under the spec's readings is scope-letters.ts.
 */

/** The scope of a resource type with these letters: `scopeOf('Encounter', 'rs')` is `system/Encounter.rs`. */
export function scopeOf(resourceType: string, letters: string): string {
  return `system/${resourceType}.${letters}`;
}

/** The scopes each resource type's operations require, as the endpoint tables show them. */
export const SCOPES = {
  MedicationRequest: { read: [scopeOf('MedicationRequest', 'rs')], update: [scopeOf('MedicationRequest', 'cru')], create: [scopeOf('MedicationRequest', 'c')] },
  Encounter: { read: [scopeOf('Encounter', 'rs')], update: [scopeOf('Encounter', 'cru')], create: [scopeOf('Encounter', 'cru')] },
  DocumentReference: {
    read: [scopeOf('DocumentReference', 'rs')],
    update: [scopeOf('DocumentReference', 'cru')],
    create: [scopeOf('DocumentReference', 'cru')],
  },
} as const;
