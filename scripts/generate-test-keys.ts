/**
 * Generates the reference server's test client keys once:
 *   fixtures/reference/keys/<client_id>.test-key.private.jwk.json  (private JWKs, test-only)
 *   fixtures/reference/clients.json                                (client registry with public JWKs)
 * Run: npx tsx scripts/generate-test-keys.ts
 * Re-running replaces every key; configs that embed key material must then be regenerated.
 */
import { writeFile, mkdir } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';
import { join } from 'node:path';
import { generateKeyPair, exportJWK, calculateJwkThumbprint } from 'jose';

const GRANT = [
  'system/MedicationRequest.rs',
  'system/MedicationRequest.cru',
  'system/MedicationRequest.c',
  'system/Encounter.rs',
  'system/Encounter.cru',
  'system/DocumentReference.rs',
  'system/DocumentReference.cru',
];

const CLIENTS = [
  { clientId: 'conformance-main', role: 'main', org: 'org-a', keyKind: 'sandbox', alg: 'ES384' },
  { clientId: 'conformance-main-2', role: 'extra', org: 'org-a', keyKind: 'sandbox', alg: 'RS384' },
  { clientId: 'conformance-org-b', role: 'second-org', org: 'org-b', keyKind: 'sandbox', alg: 'ES256' },
  { clientId: 'conformance-production', role: 'production', org: 'org-a', keyKind: 'production', alg: 'ES256' },
] as const;

const dir = fileURLToPath(new URL('../fixtures/reference/', import.meta.url));
await mkdir(join(dir, 'keys'), { recursive: true });

const registry = [];
for (const c of CLIENTS) {
  const { publicKey, privateKey } = await generateKeyPair(c.alg, { extractable: true });
  const pub = await exportJWK(publicKey);
  const kid = await calculateJwkThumbprint(pub);
  const priv = { ...(await exportJWK(privateKey)), kid, alg: c.alg, use: 'sig' };
  await writeFile(join(dir, 'keys', `${c.clientId}.test-key.private.jwk.json`), `${JSON.stringify(priv, null, 2)}\n`);
  registry.push({ ...c, scopes: GRANT, jwks: { keys: [{ ...pub, kid, alg: c.alg, use: 'sig' }] } });
}
await writeFile(join(dir, 'clients.json'), `${JSON.stringify({ clients: registry }, null, 2)}\n`);
console.log(`wrote ${registry.length} test clients to ${dir}`);
