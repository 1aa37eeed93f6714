/**
 * Access to the service interface specification the catalog quotes.
 *
 * The source of truth lives beside the project, in
 * `<project root>/../shared/spec/service-interface-spec.md` (SHARED_SPEC_PATH).
 * The package ships a byte-identical copy, `spec/service-interface-spec.md`
 * (SPEC_PATH), so the tool has the spec (and every report its hash) wherever
 * it is installed. `npm run sync-spec` refreshes the copy;
 * test/requirements/spec.test.ts fails when the two differ.
 */
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { ConformanceError } from '../errors.js';
import { SHARED_SPEC_PATH, SPEC_PATH } from '../paths.js';

export { SHARED_SPEC_PATH, SPEC_PATH };

function readSpec(): Buffer | undefined {
  try {
    return readFileSync(SPEC_PATH);
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw e;
  }
}

export function specText(): string {
  const bytes = readSpec();
  if (!bytes) {
    throw new ConformanceError('ERR_INTERNAL', `the service interface specification is not at ${SPEC_PATH}`, {
      fix: 'restore spec/service-interface-spec.md (npm run sync-spec copies it from ../shared/spec/)',
    });
  }
  return bytes.toString('utf8');
}

/** sha256 (hex) of the spec file, undefined when the file is absent. */
export function specSha256(): string | undefined {
  const bytes = readSpec();
  return bytes && createHash('sha256').update(bytes).digest('hex');
}

/**
 * The form in which quotes are compared with the spec: markdown backticks
 * removed, whitespace runs collapsed to one space, trimmed.
 */
export function normalizeQuote(text: string): string {
  return text.replaceAll('`', '').replace(/\s+/g, ' ').trim();
}
