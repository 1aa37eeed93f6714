/** The token endpoint: from the config, else from the target's SMART configuration. */
import { ConformanceError } from '../errors.js';
import type { HttpResponse, RequestOptions } from '../http/types.js';
import { PATHS } from '../service/paths.js';

export const SMART_CONFIGURATION_PATH = PATHS.smartConfiguration;

/** Reads `token_endpoint` from a SMART configuration document; throws ERR_DISCOVERY naming what is wrong. */
export function tokenEndpointFrom(status: number, body: unknown, url: string): string {
  if (status !== 200) {
    throw new ConformanceError('ERR_DISCOVERY', `${url} answered HTTP ${status}; cannot discover the token endpoint`, {
      fix: 'set "tokenUrl" in the config',
    });
  }
  const endpoint = (body as Record<string, unknown> | undefined)?.token_endpoint;
  if (typeof endpoint !== 'string' || !/^https?:\/\//.test(endpoint)) {
    throw new ConformanceError('ERR_DISCOVERY', `${url} has no absolute http(s) token_endpoint`, { fix: 'set "tokenUrl" in the config' });
  }
  return endpoint;
}

/** `tokenUrl` when configured, else discovered through `http`. */
export async function resolveTokenUrl(
  config: { baseUrl: string; tokenUrl?: string },
  http: { request(opts: RequestOptions): Promise<HttpResponse> },
): Promise<string> {
  if (config.tokenUrl) return config.tokenUrl;
  const url = `${config.baseUrl}${SMART_CONFIGURATION_PATH}`;
  const res = await http.request({ method: 'GET', url, headers: { accept: 'application/json' } });
  return tokenEndpointFrom(res.status, res.json, url);
}
