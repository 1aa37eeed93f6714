/**
 * How the reference renders the FHIR resources it answers, under the modes that
 * make server-owned content differ from what the client wrote (docs/comparison.md):
 * a narrative `text` regenerated on every write, a `display` added to references,
 * instants written at another offset or precision, a pretty-printed body. Each is
 * a choice FHIR leaves to the server; the suite must pass in each.
 */
import type { ReferenceModes } from './types.js';

type Json = Record<string, unknown>;

const isObject = (v: unknown): v is Json => typeof v === 'object' && v !== null && !Array.isArray(v);
/** A FHIR dateTime/instant with a time and a zone. */
const INSTANT = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?(Z|[+-]\d{2}:\d{2})$/;
/** A literal reference to a resource by type and id. */
const LITERAL_REFERENCE = /^([A-Z][A-Za-z]+)\/([A-Za-z0-9.-]{1,64})$/;
/** The offset `instantFormat=offset` writes instants at (Mexico City, no daylight saving time since 2022). */
const OFFSET_MINUTES = -6 * 60;

export type RenderModes = Pick<ReferenceModes, 'narrative' | 'referenceDisplay' | 'instantFormat'>;

/** Whether any rendering mode changes the answers. */
export function rendersDifferently(modes: RenderModes): boolean {
  return modes.narrative !== 'none' || modes.referenceDisplay !== 'as-written' || modes.instantFormat !== 'as-stored';
}

/** The body as the modes render it (a new object; `body` is left untouched). Non-resources pass unchanged. */
export function renderBody(body: unknown, modes: RenderModes): unknown {
  if (!isObject(body) || typeof body.resourceType !== 'string' || !rendersDifferently(modes)) return body;
  return renderResource(structuredClone(body), modes, true);
}

function renderResource(resource: Json, modes: RenderModes, topLevel: boolean): Json {
  if (resource.resourceType === 'Bundle' && Array.isArray(resource.entry)) {
    for (const entry of resource.entry) if (isObject(entry) && isObject(entry.resource)) entry.resource = renderResource(entry.resource, modes, true);
  }
  walk(resource, modes);
  if (topLevel && modes.narrative === 'regenerate' && resource.resourceType !== 'Bundle' && resource.resourceType !== 'OperationOutcome') {
    const { resourceType, id, meta, ...rest } = resource;
    return {
      resourceType,
      ...(id === undefined ? {} : { id }),
      ...(meta === undefined ? {} : { meta }),
      text: narrativeOf(resource),
      ...without(rest, 'text'),
    };
  }
  return resource;
}

function without(o: Json, key: string): Json {
  const { [key]: _drop, ...rest } = o;
  return rest;
}

/** References get a display, instants another spelling; in place, Bundle entries aside (rendered on their own). */
function walk(node: unknown, modes: RenderModes): void {
  if (Array.isArray(node)) {
    node.forEach((item, i) => {
      if (typeof item === 'string') node[i] = instant(item, modes);
      else walk(item, modes);
    });
    return;
  }
  if (!isObject(node)) return;
  for (const [key, value] of Object.entries(node)) {
    if (key === 'entry' && node.resourceType === 'Bundle') continue;
    if (typeof value === 'string') node[key] = instant(value, modes);
    else walk(value, modes);
  }
  if (modes.referenceDisplay === 'inject' && typeof node.reference === 'string' && node.display === undefined) {
    const m = LITERAL_REFERENCE.exec(node.reference);
    if (m) node.display = `${m[1]} ${m[2]!.slice(0, 8)}`;
  }
}

/** `utc-millis`: `2026-05-01T16:15:00.000Z`; `offset`: the same instant at -06:00, to the second or millisecond as stored. */
function instant(value: string, modes: RenderModes): string {
  if (modes.instantFormat === 'as-stored' || !INSTANT.test(value)) return value;
  const t = Date.parse(value);
  if (Number.isNaN(t)) return value;
  if (modes.instantFormat === 'utc-millis') return new Date(t).toISOString();
  const local = new Date(t + OFFSET_MINUTES * 60_000).toISOString();
  const millis = /\.\d+/.test(value) ? local.slice(19, 23) : '';
  return `${local.slice(0, 19)}${millis}-06:00`;
}

/** A narrative generated from the resource as rendered: it changes with every version. */
function narrativeOf(resource: Json): Json {
  const meta = isObject(resource.meta) ? resource.meta : {};
  const status = typeof resource.status === 'string' ? `, ${resource.status}` : '';
  const text = `${String(resource.resourceType)} ${String(resource.id ?? '')}${status} (version ${String(meta.versionId ?? '?')}, ${String(meta.lastUpdated ?? '')})`;
  return { status: 'generated', div: `<div xmlns="http://www.w3.org/1999/xhtml"><p>${escapeXml(text)}</p></div>` };
}

function escapeXml(s: string): string {
  return s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');
}
