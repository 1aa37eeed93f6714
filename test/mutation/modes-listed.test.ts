/**
 * Every alternative-conformant choice of the reference (MODE_VALUES) is run by the mutation test
 * (ALTERNATIVE_MODES): a mode added to the reference and not to the list is never shown to pass.
 * The main key's algorithms are sampled one of each family (RSA PKCS#1, RSA-PSS, ECDSA, EdDSA).
 */
import { describe, expect, it } from 'vitest';
import { ALTERNATIVE_MODES } from '../../src/mutation/run.js';
import { DEFAULT_MODES, MODE_VALUES } from '../../src/reference/types.js';

const listed = (key: string, value: unknown) => ALTERNATIVE_MODES.some((m) => (m.modes as Record<string, unknown> | undefined)?.[key] === value);

describe('ALTERNATIVE_MODES', () => {
  it('lists every non-default value of every mode but mainKeyAlg', () => {
    const missing = Object.entries(MODE_VALUES)
      .filter(([key]) => key !== 'mainKeyAlg')
      .flatMap(([key, values]) =>
        (values as readonly unknown[])
          .filter((v) => v !== (DEFAULT_MODES as unknown as Record<string, unknown>)[key] && !listed(key, v))
          .map((v) => `${key}=${String(v)}`),
      );
    expect(missing).toEqual([]);
  });

  it('lists a main key algorithm of each family', () => {
    const families = MODE_VALUES.mainKeyAlg.filter((alg) => alg !== DEFAULT_MODES.mainKeyAlg && listed('mainKeyAlg', alg)).map((alg) => alg.slice(0, 2));
    expect(new Set(families)).toEqual(new Set(['RS', 'PS', 'ES', 'Ed']));
  });
});
