/** The embedded reference's operation model: what the catalog generates checks from when no target is given. */
import { createReferenceServer } from '../reference/index.js';
import { HttpClient } from '../http/client.js';
import { SERVICE_HTTP } from '../service/http.js';
import { discover, type OperationModel } from '../discovery/index.js';
import { collectChecks } from '../engine/catalog.js';
import type { CatalogCheck } from '../engine/plan.js';

export async function referenceModel(): Promise<OperationModel> {
  const server = await createReferenceServer({ host: '127.0.0.1', port: 0 });
  const http = new HttpClient({ baseUrl: server.url, protocol: SERVICE_HTTP });
  try {
    return await discover(http);
  } finally {
    await http.close();
    await server.close();
  }
}

/** Every check of the catalog, generated ones from the embedded reference's model. */
export async function referenceCatalog(): Promise<CatalogCheck[]> {
  return collectChecks(await referenceModel());
}
