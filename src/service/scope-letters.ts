/**
 * Scope letters (spec: Authentication > Using a token): which letter sets of a
 * resource's scopes the spec refuses for an operation under every reading, and
 * which it leaves open.
 *
 * Two readings of "Letters required per operation as shown" are accepted:
 * - superset: a held scope covers the requirement when it holds every required letter;
 * - per interaction (SMART v2 style): `r` read, `s` search, `c` create, `u` update.
 * A letter set that covers the operation under neither reading must be refused
 * (403 HPB-00104); one that covers it under one reading only is open.
 */
import type { ModelInteraction } from '../discovery/model.js';

export interface ParsedScope {
  resource: string;
  letters: string;
}

const SCOPE_FORM = /^system\/([A-Z][A-Za-z]*)\.([a-z]+)$/;

/** `system/<ResourceType>.<letters>`, or undefined when the scope has another form. */
export function parseScope(scope: string | undefined): ParsedScope | undefined {
  const m = scope === undefined ? null : SCOPE_FORM.exec(scope);
  return m ? { resource: m[1]!, letters: m[2]! } : undefined;
}

export function isScopeForm(scope: string): boolean {
  return SCOPE_FORM.test(scope);
}

const INTERACTION_LETTER: Partial<Record<ModelInteraction, string>> = {
  read: 'r',
  'search-type': 's',
  create: 'c',
  update: 'u',
};

const holdsAll = (held: string, required: string) => [...required].every((l) => held.includes(l));

/** Whether some accepted reading lets `held` letters perform the operation that requires `required`. */
export function coversUnderSomeReading(held: string, required: string, interaction: ModelInteraction): boolean {
  if (holdsAll(held, required)) return true;
  const letter = INTERACTION_LETTER[interaction];
  // An operation ($upload) has no letter of its own: any shared letter is a possible reading.
  return letter ? held.includes(letter) : [...held].some((l) => required.includes(l));
}

export type LetterVerdict = 'refused' | 'open';

/** 'refused' when no reading covers the operation with these letters, 'open' otherwise. */
export function letterVerdict(held: string, required: string, interaction: ModelInteraction): LetterVerdict {
  return coversUnderSomeReading(held, required, interaction) ? 'open' : 'refused';
}
