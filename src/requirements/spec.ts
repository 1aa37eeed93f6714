/**
 * Access to the service interface specification the catalog quotes. The spec
 * lives beside the project: `<project root>/../shared/spec/service-interface-spec.md`.
 */
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { ConformanceError } from '../errors.js';

export const SPEC_PATH = fileURLToPath(new URL('../../../shared/spec/service-interface-spec.md', import.meta.url));

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
      fix: 'place service-interface-spec.md in shared/spec/ beside the project directory',
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
