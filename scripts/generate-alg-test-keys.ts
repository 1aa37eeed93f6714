/**
 * Generates the test keys of the reference's main client in the other signing algorithms (mode
 * `mainKeyAlg`, src/reference/types.ts), once:
 *   fixtures/reference/keys/conformance-main.<alg>.test-key.private.jwk.json  (private JWKs, test-only)
 * The reference derives the public key from the file when the mode asks for it. ES384 is the
 * fixture key of scripts/generate-test-keys.ts. Run: npx tsx scripts/generate-alg-test-keys.ts
 * (re-running replaces these keys only).
 */
import { writeFile } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';
import { join } from 'node:path';
import { calculateJwkThumbprint, exportJWK, generateKeyPair } from 'jose';
import { SIGNING_ALGS } from '../src/auth/algorithms.js';

const dir = fileURLToPath(new URL('../fixtures/reference/keys/', import.meta.url));
const algs = SIGNING_ALGS.filter((a) => a !== 'ES384');
for (const alg of algs) {
  const { publicKey, privateKey } = await generateKeyPair(alg, { extractable: true, ...(alg === 'EdDSA' ? { crv: 'Ed25519' } : {}) });
  const kid = await calculateJwkThumbprint(await exportJWK(publicKey));
  const priv = { ...(await exportJWK(privateKey)), kid, alg, use: 'sig' };
  await writeFile(join(dir, `conformance-main.${alg.toLowerCase()}.test-key.private.jwk.json`), `${JSON.stringify(priv, null, 2)}\n`);
}
console.log(`wrote ${algs.length} test keys of conformance-main to ${dir}`);
