/**
 * The R4 MedicationRequest and Encounter operations sent while a key is over
 * its limit (endpoint tables: every row lists 429 `HPB-00105`). Each goes out
 * once, unpaced and without retries, inside the rate-limit suite's single
 * exhaustion episode. Creates carry a valid body (a server that does not
 * refuse them creates a resource, which the check puts into the ledger); updates target
 * an id that does not exist, so a server that does not refuse them changes nothing.
 */
import { randomUUID } from 'node:crypto';
import type { CheckContext } from '../../src/engine/index.js';
import type { ModelOperation } from '../../src/discovery/index.js';
import { encounterBody, newMedicationRequest, rateHeaders } from '../../src/service/index.js';
import type { Hit } from './support.js';

const SCOPES = {
  MedicationRequest: { read: ['system/MedicationRequest.rs'], write: ['system/MedicationRequest.cru'], create: ['system/MedicationRequest.c'] },
  Encounter: { read: ['system/Encounter.rs'], write: ['system/Encounter.cru'], create: ['system/Encounter.cru'] },
} as const;

type Resource = keyof typeof SCOPES;

export interface ThrottledOperation {
  requirement: string;
  resource: Resource;
  interaction: ModelOperation['interaction'];
  scopes: readonly string[];
  fixtures: string[];
  request(ctx: CheckContext, op: ModelOperation): { method: string; url: string; body?: unknown };
}

const FIXTURE = { MedicationRequest: 'medicationRequest', Encounter: 'encounter' } as const;
const SLUG = { MedicationRequest: 'medication-request', Encounter: 'encounter' } as const;

function operationsOf(resource: Resource): ThrottledOperation[] {
  const scopes = SCOPES[resource];
  const body = (ctx: CheckContext, id?: string) =>
    resource === 'Encounter' ? encounterBody(ctx, id ? { id } : {}) : newMedicationRequest(ctx, id ? { id } : {});
  const writeFixtures = resource === 'Encounter' ? ['patient', 'practitioner'] : ['patient'];
  return [
    {
      requirement: `${SLUG[resource]}.read-429`, resource, interaction: 'read', scopes: scopes.read, fixtures: [FIXTURE[resource]],
      request: (ctx, op) => ({ method: 'GET', url: ctx.path(op.path, { id: ctx.fixture(FIXTURE[resource]) }) }),
    },
    {
      requirement: `${SLUG[resource]}.search-429`, resource, interaction: 'search-type', scopes: scopes.read, fixtures: ['patient'],
      request: (ctx, op) => ({ method: 'GET', url: `${op.path}?patient=${encodeURIComponent(ctx.fixture('patient'))}&_count=1` }),
    },
    {
      requirement: `${SLUG[resource]}.create-429`, resource, interaction: 'create', scopes: scopes.create, fixtures: writeFixtures,
      request: (ctx, op) => ({ method: 'POST', url: op.path, body: body(ctx) }),
    },
    {
      requirement: `${SLUG[resource]}.update-429`, resource, interaction: 'update', scopes: scopes.write, fixtures: writeFixtures,
      request: (ctx, op) => {
        const missing = randomUUID();
        return { method: 'PUT', url: ctx.path(op.path, { id: missing }), body: body(ctx, missing) };
      },
    },
  ];
}

export const THROTTLED_OPERATIONS: readonly ThrottledOperation[] = [...operationsOf('MedicationRequest'), ...operationsOf('Encounter')];

/** What one throttled operation got, or why it was not sent. */
export interface ThrottledAnswer {
  requirement: string;
  hit?: Hit;
  notSent?: string;
}

/** The operations this target can be asked: published, with their fixtures configured. */
export function sendable(ctx: CheckContext, t: ThrottledOperation): { op?: ModelOperation; notSent?: string } {
  const op = ctx.findOperation(t.resource, t.interaction, 'R4');
  if (!op) return { notSent: `the target publishes no R4 ${t.resource} ${t.interaction} operation` };
  const missing = t.fixtures.filter((f) => !ctx.hasFixture(f));
  if (missing.length) return { notSent: `fixture not provided: ${missing.join(', ')}` };
  return { op };
}

/** Tokens for every operation, fetched before the key is exhausted (no token request inside the episode). */
export async function operationTokens(ctx: CheckContext, role: string, validForMs: number): Promise<void> {
  const scopeSets = new Map(THROTTLED_OPERATIONS.map((t) => [t.scopes.join(' '), t.scopes]));
  for (const scopes of scopeSets.values()) await ctx.tokens.token(role, [...scopes], { validForMs });
}

/** Sends each operation once for `role` while its key is refused. */
export async function sendThrottled(ctx: CheckContext, role: string): Promise<ThrottledAnswer[]> {
  const answers: ThrottledAnswer[] = [];
  for (const t of THROTTLED_OPERATIONS) {
    const { op, notSent } = sendable(ctx, t);
    if (!op) {
      answers.push({ requirement: t.requirement, notSent });
      continue;
    }
    const sentAt = Date.now();
    // Sent before Retry-After elapses on purpose (each is judged on its 429), so past the key's hold.
    const res = await ctx.fhir({ role, scopes: [...t.scopes], pace: false, retry: 'none', expect429: true, earlyRetry: true, ...t.request(ctx, op) });
    answers.push({ requirement: t.requirement, hit: { sentAt, receivedAt: Date.now(), res, headers: rateHeaders(res) } });
  }
  return answers;
}
