/**
 * --redact-phi: masks patient identifiers and CURPs everywhere in a report
 * (evidence bodies, headers, URLs, curl, messages, expected/actual, ledger).
 *
 * A patient id is a UUID seen as `Patient/<uuid>` (also URL-encoded
 * `Patient%2F<uuid>`), as the value of a `patient=` query parameter, or one
 * of the ids passed in. Once known, the UUID is masked wherever it appears,
 * so a Patient resource's own `"id"` is masked too. Each distinct id gets a
 * stable placeholder (`redacted-patient-1`, ...) so exchanges stay comparable.
 * CURP-shaped values become `REDACTED-CURP`.
 *
 * Bodies in the run's body table are masked like every other string: the
 * document is masked with its bodies inline, then the table is rebuilt, keyed
 * by the hashes of the masked texts (a key never hashes an unmasked body).
 */
import { inlineBodies, internBodies } from './evidence.js';
import { forEachString, mapStrings } from './map-strings.js';
import type { ReportDocument } from './types.js';

const UUID = '[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}';
const PATIENT_ID_CONTEXT = new RegExp(`(?:Patient(?:/|%2[fF])|[?&]patient(?:=|%3[dD]))(${UUID})`, 'g');
const CURP = /[A-Z]{4}\d{6}[HM][A-Z]{5}[A-Z0-9]\d/g;
export const CURP_PLACEHOLDER = 'REDACTED-CURP';

export function maskPhi(report: ReportDocument, patientIds: string[] = []): ReportDocument {
  const doc = inlineBodies(report);
  const placeholders = new Map<string, string>();
  const remember = (id: string): void => {
    const key = id.toLowerCase();
    if (!placeholders.has(key)) placeholders.set(key, `redacted-patient-${placeholders.size + 1}`);
  };
  for (const id of patientIds) if (id.trim() !== '') remember(id.trim());
  forEachString(doc, (s) => {
    for (const m of s.matchAll(PATIENT_ID_CONTEXT)) remember(m[1]!);
  });
  const ids = [...placeholders.keys()].sort((a, b) => b.length - a.length).map(escapeRegExp);
  const anyId = ids.length > 0 ? new RegExp(ids.join('|'), 'gi') : undefined;
  const mask = (s: string): string => {
    const masked = s.replace(CURP, CURP_PLACEHOLDER);
    return anyId ? masked.replace(anyId, (m) => placeholders.get(m.toLowerCase())!) : masked;
  };
  const { formatVersion, run, phiMasked: _was, ...rest } = mapStrings(doc, mask);
  return internBodies({ formatVersion, run, phiMasked: true, ...rest });
}

function escapeRegExp(s: string): string {
  return s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}
