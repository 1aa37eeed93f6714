/**
 * The audit trail (spec: Authentication > Audit). Every authenticated request
 * writes an immutable record; records are not readable through the public API
 * (v1), so the reference keeps them in memory, append-only, for tests.
 */
export interface AuditRecord {
  /** ISO 8601 with UTC offset. */
  readonly timestamp: string;
  readonly resourceType: string;
  /** The resource id, when the request names or creates one. */
  readonly resourceId?: string;
  /** API key identifier (client id). */
  readonly apiKey: string;
  readonly organization: string;
  /** Query parameters of searches. */
  readonly query?: Readonly<Record<string, string>>;
  /** Number of resources returned. */
  readonly returned: number;
  readonly clientIp: string;
  readonly correlationId: string;
  readonly status: number;
}

export class AuditLog {
  private readonly records: AuditRecord[] = [];

  append(record: AuditRecord): void {
    this.records.push(Object.freeze({ ...record, ...(record.query ? { query: Object.freeze({ ...record.query }) } : {}) }));
  }

  /** A copy of every record so far, oldest first. */
  all(): readonly AuditRecord[] {
    return [...this.records];
  }
}

/** How many resources a response body returns: a Bundle's entries, one resource, or none. */
export function returnedCount(status: number, body: unknown): number {
  if (status >= 300) return 0;
  const b = (typeof body === 'string' ? safeParse(body) : body) as { resourceType?: unknown; entry?: unknown } | undefined;
  if (!b || typeof b !== 'object') return 0;
  if (b.resourceType === 'Bundle') return Array.isArray(b.entry) ? b.entry.length : 0;
  return typeof b.resourceType === 'string' && b.resourceType !== 'OperationOutcome' ? 1 : 0;
}

function safeParse(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}
