/**
 * The error catalogs of the service interface specification (section "Errors"),
 * as data. Shared by the reference server (to emit errors) and by the suites
 * (to check them). `issueCode` is set only where the spec names it.
 */
export interface CatalogEntry {
  code: string;
  status: number;
  message: string;
  /** FHIR issue type, only where the spec states it (Errors, Format rule 4). */
  issueCode?: 'invalid' | 'throttled';
  /** Other statuses the spec's endpoint tables use this code with. */
  alsoStatus?: number[];
}

export const CATALOG_SYSTEM = 'https://clinical-records.example/fhir/CodeSystem/error-catalog';

export const PUBLIC_CATALOG: readonly CatalogEntry[] = [
  { code: 'HPB-00101', status: 400, message: 'Validation error', issueCode: 'invalid', alsoStatus: [422] },
  { code: 'HPB-00102', status: 404, message: 'Resource not found' },
  { code: 'HPB-00103', status: 409, message: 'Version conflict; re-read, reapply, retry with the current meta.versionId' },
  { code: 'HPB-00104', status: 403, message: 'Insufficient scope' },
  { code: 'HPB-00105', status: 429, message: 'Rate limit exceeded', issueCode: 'throttled' },
  { code: 'HPB-00106', status: 401, message: 'Authentication failed (assertion invalid)' },
  { code: 'HPB-00107', status: 401, message: 'Authentication failed (access token expired)' },
  { code: 'HPB-00108', status: 409, message: 'Patient was merged into another record; no new clinical data accepted' },
  { code: 'HPB-00109', status: 409, message: 'Patient is marked deceased; no new clinical data accepted' },
  { code: 'HPB-00110', status: 401, message: 'Inbound webhook authentication failed' },
  { code: 'HPB-00122', status: 413, message: 'Inbound webhook body exceeds the maximum size' },
  { code: 'HPB-00111', status: 404, message: 'MedicationRequest not found' },
  { code: 'HPB-00112', status: 404, message: 'ServiceRequest not found' },
  { code: 'HPB-00113', status: 400, message: 'ServiceRequest must contain at least one item' },
  { code: 'HPB-00114', status: 409, message: 'Signed or cancelled prescription cannot be modified' },
  { code: 'HPB-00115', status: 422, message: 'The service offers several specialties; one must be chosen to book' },
  { code: 'HPB-00116', status: 422, message: 'The chosen specialty is not offered by this service' },
  { code: 'HPB-00117', status: 404, message: 'Composition not found' },
  { code: 'HPB-00118', status: 404, message: 'DocumentReference not found' },
  { code: 'HPB-00119', status: 413, message: 'Document exceeds the maximum size' },
  { code: 'HPB-00120', status: 400, message: 'Document content invalid or declared type does not match' },
  { code: 'HPB-00121', status: 429, message: 'Sandbox key volume cap exceeded' },
  { code: 'HPB-00123', status: 409, message: 'A finalized clinical note cannot be voided' },
  { code: 'HPB-00124', status: 403, message: 'Production credentials cannot be used from a browser origin' },
  { code: 'HPB-00135', status: 409, message: 'Signed or cancelled service order cannot be modified' },
  { code: 'HPB-00136', status: 409, message: 'Multi-item service orders are read-only on this surface' },
  { code: 'HPB-00137', status: 422, message: 'Appointment status transition not allowed' },
  { code: 'HPB-00138', status: 409, message: 'Appointment already has an active encounter' },
  { code: 'HPB-00139', status: 422, message: 'Encounter date outside the allowed registration window' },
  { code: 'HPB-00140', status: 422, message: 'Cannot modify a medication request in entered-in-error' },
  { code: 'HPB-00141', status: 403, message: 'A clinic configured for the normativa must be selected before starting a consultation' },
  { code: 'HPB-00142', status: 422, message: "The patient's required normativa data must be completed before starting a consultation" },
  { code: 'HPB-00143', status: 422, message: 'Cannot update an observation in entered-in-error' },
  { code: 'HPB-00144', status: 422, message: 'Observation.subject cannot be changed on update' },
  { code: 'HPB-00145', status: 400, message: 'Invalid CURP format' },
  { code: 'HPB-00146', status: 400, message: 'CURP does not match the entered data' },
  { code: 'HPB-00147', status: 422, message: 'Mexican organizations must choose every place from the national locality catalog, not free-typed values' },
  { code: 'HPB-00148', status: 403, message: 'Organization is blocked' },
  { code: 'HPB-00149', status: 422, message: 'Surname' },
];

export const GENERIC_CATALOG: readonly CatalogEntry[] = [
  { code: 'SVC-00001', status: 500, message: 'Internal server error' },
  { code: 'SVC-00002', status: 404, message: 'Resource not found' },
  { code: 'SVC-00003', status: 400, message: 'Bad request' },
  { code: 'SVC-00004', status: 401, message: 'Unauthorized' },
  { code: 'SVC-00005', status: 403, message: 'Forbidden' },
  { code: 'SVC-00007', status: 503, message: 'Service unavailable' },
];

const BY_CODE = new Map<string, CatalogEntry>([...PUBLIC_CATALOG, ...GENERIC_CATALOG].map((e) => [e.code, e]));

export function catalogEntry(code: string): CatalogEntry {
  const entry = BY_CODE.get(code);
  if (!entry) throw new Error(`unknown catalog code ${code}`);
  return entry;
}

/** `HPB-00101` / `SVC-00004` shape, as used in `diagnostics` prefixes. */
export const CATALOG_CODE_PATTERN = /^(HPB|SVC)-\d{5}$/;
