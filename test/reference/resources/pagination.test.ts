import { beforeEach, describe, expect, it } from 'vitest';
import { OPERATIONS } from '../../../src/service/api.js';
import { createCursorCodec } from '../../../src/reference/resources/cursor.js';
import type { ResourceEnv } from '../../../src/reference/resources/env.js';
import { medicationRequestHandlers } from '../../../src/reference/resources/medication-request.js';
import { loadFixtures, Store } from '../../../src/reference/resources/store.js';
import { DEFAULT_LIMITS, DEFAULT_MODES, FhirError, type HandlerContext, type ReferenceModes } from '../../../src/reference/types.js';
import { allPages, BASE, expectError, FIXTURES_DIR, harness, IDS, NOW, type Harness } from './harness.js';

const Q = `patient=${IDS.patient}`;
const idsOf = (pages: any[]) => pages.flatMap((p) => p.entry.map((e: any) => e.resource.id as string));
const nextOf = (body: any) => body.link.find((l: any) => l.relation === 'next')?.url as string | undefined;
const queryOf = (url: string) => new URL(url).search.slice(1);

/** MedicationRequest search over a store the test can also mutate. */
async function directSearch(modes: Partial<ReferenceModes> = {}) {
  const store = new Store(await loadFixtures(FIXTURES_DIR));
  const m = { ...DEFAULT_MODES, ...modes };
  const env: ResourceEnv = {
    store,
    limits: DEFAULT_LIMITS,
    modes: m,
    faults: new Set(),
    paging: { modes: m, cursors: createCursorCodec(m.cursorEncoding), snapshotSeq: () => store.snapshotSeq() },
  };
  const handler = medicationRequestHandlers(env)['MedicationRequest.search']!;
  const op = OPERATIONS.find((o) => o.operationId === 'MedicationRequest.search')!;
  const search = async (query: string, org = 'org-a'): Promise<any> => {
    const ctx: HandlerContext = {
      op,
      caller: { clientId: 'c', org, keyKind: 'sandbox', scopes: [] },
      params: {},
      query: new URLSearchParams(query),
      headers: {},
      body: undefined,
      baseUrl: BASE,
      now: NOW,
    };
    return (await handler(ctx)).body;
  };
  return { store, search };
}

/** Expected order: creation time, then id per tie-break. */
function expectedOrder(rows: Array<{ id: string; createdAt: string }>, tieBreak: 'uuid-asc' | 'uuid-desc'): string[] {
  const sign = tieBreak === 'uuid-asc' ? 1 : -1;
  return [...rows].sort((a, b) => Date.parse(a.createdAt) - Date.parse(b.createdAt) || (a.id < b.id ? -sign : sign)).map((r) => r.id);
}

let h: Harness;
beforeEach(async () => {
  h = await harness();
});

describe('Bundle shape and links', () => {
  it('returns a searchset with total, self and next links and match entries', async () => {
    const body = await h.ok('MedicationRequest.search', { query: Q });
    expect(body).toMatchObject({ resourceType: 'Bundle', type: 'searchset', total: 160 });
    expect(body.entry).toHaveLength(20);
    expect(body.link[0]).toEqual({ relation: 'self', url: `${BASE}/fhir/R4/MedicationRequest?${Q}` });
    for (const e of body.entry) {
      expect(e).toEqual({
        fullUrl: `${BASE}/fhir/R4/MedicationRequest/${e.resource.id}`,
        resource: expect.objectContaining({ resourceType: 'MedicationRequest' }),
        search: { mode: 'match' },
      });
    }
    const next = new URL(nextOf(body)!);
    expect(`${next.origin}${next.pathname}`).toBe(`${BASE}/fhir/R4/MedicationRequest`);
    expect(next.searchParams.get('patient')).toBe(IDS.patient);
    expect(next.searchParams.get('_count')).toBe('20');
    expect(next.searchParams.get('_cursor')).toBeTruthy();
    const second = await h.ok('MedicationRequest.search', { query: queryOf(next.href) });
    expect(second.link[0]).toEqual({ relation: 'self', url: next.href });
  });

  it('carries every search parameter into the next link', async () => {
    const body = await h.ok('Encounter.search', { query: `patient=${IDS.patient}&date=ge2025-02-01&status=finished,planned&_count=2` });
    const next = new URL(nextOf(body)!);
    expect(next.searchParams.get('patient')).toBe(IDS.patient);
    expect(next.searchParams.get('date')).toBe('ge2025-02-01');
    expect(next.searchParams.get('status')).toBe('finished,planned');
    expect(next.searchParams.get('_count')).toBe('2');
  });

  it('renders an empty result as total 0, a self link, an empty entry array and no next', async () => {
    const body = await h.ok('MedicationRequest.search', { query: `patient=${IDS.patientNoRecords}` });
    expect(body).toEqual({
      resourceType: 'Bundle',
      type: 'searchset',
      total: 0,
      link: [{ relation: 'self', url: `${BASE}/fhir/R4/MedicationRequest?patient=${IDS.patientNoRecords}` }],
      entry: [],
    });
  });
});

describe('_count', () => {
  it('defaults to 20 and allows 100', async () => {
    expect((await h.ok('MedicationRequest.search', { query: Q })).entry).toHaveLength(20);
    expect((await h.ok('MedicationRequest.search', { query: `${Q}&_count=100` })).entry).toHaveLength(100);
  });

  it('clamps over 100 in countOver100=clamp mode', async () => {
    const body = await h.ok('MedicationRequest.search', { query: `${Q}&_count=101` });
    expect(body.entry).toHaveLength(100);
    expect(new URL(nextOf(body)!).searchParams.get('_count')).toBe('100');
  });

  it('refuses over 100 with 400 HPB-00101 in countOver100=reject mode', async () => {
    const strict = await harness({ modes: { countOver100: 'reject' } });
    expect(expectError(await strict.call('MedicationRequest.search', { query: `${Q}&_count=101` }))).toEqual({
      status: 400,
      code: 'HPB-00101',
      issueCode: 'invalid',
    });
    expect((await strict.ok('MedicationRequest.search', { query: `${Q}&_count=100` })).entry).toHaveLength(100);
  });

  it.each(['0', '-1', 'abc', '1.5', ''])('refuses _count=%s with 400 HPB-00101 in both modes', async (value) => {
    for (const countOver100 of ['clamp', 'reject'] as const) {
      const hh = await harness({ modes: { countOver100 } });
      expect(expectError(await hh.call('MedicationRequest.search', { query: `${Q}&_count=${value}` }))).toMatchObject({ status: 400, code: 'HPB-00101' });
    }
  });
});

describe('keyset paging', () => {
  for (const tieBreak of ['uuid-asc', 'uuid-desc'] as const) {
    it(`pages through 160 records with no duplicates or gaps, ordered by time then id (${tieBreak})`, async () => {
      const hh = await harness({ modes: { tieBreak } });
      const rows = (hh.resources.snapshot() as any).medicationRequests.filter((r: any) => r.subjectId === IDS.patient);
      const times = rows.map((r: any) => r.createdAt);
      expect(new Set(times).size).toBeLessThan(times.length); // some records share their time
      const pages = await allPages(hh, 'MedicationRequest.search', `${Q}&_count=7`);
      expect(pages).toHaveLength(Math.ceil(160 / 7));
      expect(nextOf(pages.at(-1))).toBeUndefined();
      for (const p of pages) expect(p.total).toBe(160);
      expect(idsOf(pages)).toEqual(expectedOrder(rows, tieBreak));
    });
  }

  const TIME = {
    created: (r: any) => r.createdAt,
    'resource-time': (r: any) => r.authoredOn ?? r.createdAt,
    'last-updated': (r: any) => r.lastUpdated,
  } as const;
  for (const orderBy of ['created', 'resource-time', 'last-updated'] as const) {
    for (const orderDirection of ['ascending', 'descending'] as const) {
      it(`orders by ${orderBy} ${orderDirection} (then the id) across pages`, async () => {
        const hh = await harness({ modes: { orderBy, orderDirection } });
        const rows = (hh.resources.snapshot() as any).medicationRequests.filter((r: any) => r.subjectId === IDS.patient);
        const sign = orderDirection === 'ascending' ? 1 : -1;
        const expected = [...rows]
          .sort((a: any, b: any) => (Date.parse(TIME[orderBy](a)) - Date.parse(TIME[orderBy](b))) * sign || (a.id < b.id ? -1 : 1))
          .map((r: any) => r.id);
        expect(idsOf(await allPages(hh, 'MedicationRequest.search', `${Q}&_count=13`))).toEqual(expected);
      });
    }
  }

  it('holds fixtures whose creation, authoredOn and lastUpdated orders all differ', async () => {
    const rows = (h.resources.snapshot() as any).medicationRequests.filter((r: any) => r.subjectId === IDS.patient);
    const order = (key: (r: any) => string) =>
      [...rows]
        .sort((a: any, b: any) => Date.parse(key(a)) - Date.parse(key(b)) || (a.id < b.id ? -1 : 1))
        .map((r: any) => r.id)
        .join();
    expect(new Set([order(TIME.created), order(TIME['resource-time']), order(TIME['last-updated'])]).size).toBe(3);
  });

  it('works the same with handle cursors', async () => {
    const hh = await harness({ modes: { cursorEncoding: 'handle' } });
    const pages = await allPages(hh, 'MedicationRequest.search', `${Q}&_count=30`);
    expect(new Set(idsOf(pages)).size).toBe(160);
    expect(idsOf(pages)).toHaveLength(160);
  });

  it('keeps the snapshot: records created while paging never appear, and total stays', async () => {
    const first = await h.ok('MedicationRequest.search', { query: `${Q}&_count=50` });
    const created = await h.ok('MedicationRequest.create', {
      body: { resourceType: 'MedicationRequest', medicationCodeableConcept: { text: 'new' }, subject: { reference: `Patient/${IDS.patient}` } },
      now: NOW,
    });
    const rest: any[] = [];
    let next = nextOf(first);
    while (next !== undefined && rest.length < 10) {
      const page = await h.ok('MedicationRequest.search', { query: queryOf(next) });
      rest.push(page);
      next = nextOf(page);
    }
    const seen = [...first.entry.map((e: any) => e.resource.id), ...idsOf(rest)];
    expect(seen).toHaveLength(160);
    expect(seen).not.toContain(created.id);
    for (const p of rest) expect(p.total).toBe(160);
    const fresh = await allPages(h, 'MedicationRequest.search', `${Q}&_count=100`);
    expect(fresh[0].total).toBe(161);
    expect(idsOf(fresh)).toContain(created.id);
  });

  it('has no gaps or duplicates when rows are deleted while paging', async () => {
    const { store, search } = await directSearch();
    const first = await search(`${Q}&_count=20`);
    const full = expectedOrder(
      store.medicationRequests.all('org-a').filter((r) => r.subjectId === IDS.patient),
      'uuid-asc',
    );
    // Delete the last row of page 1 (the keyset position) and two rows further on.
    const deleted = [full[19]!, full[25]!, full[90]!];
    for (const id of deleted) store.medicationRequests.delete(id);
    const seen: string[] = first.entry.map((e: any) => e.resource.id);
    let next = nextOf(first);
    for (let i = 0; next !== undefined && i < 20; i++) {
      const page = await search(queryOf(next));
      seen.push(...page.entry.map((e: any) => e.resource.id));
      next = nextOf(page);
    }
    expect(seen).toEqual(full.filter((id) => id === full[19] || !deleted.includes(id)));
  });
});

describe('cursor integrity', () => {
  async function firstCursor(hh: Harness = h): Promise<string> {
    return new URL(nextOf(await hh.ok('MedicationRequest.search', { query: Q }))!).searchParams.get('_cursor')!;
  }
  const refuse = async (hh: Harness, query: string, org = 'org-a') =>
    expect(expectError(await hh.call('MedicationRequest.search', { query, org }))).toEqual({ status: 400, code: 'HPB-00101', issueCode: 'invalid' });

  it('refuses garbage and tampered base64 cursors', async () => {
    const cursor = await firstCursor();
    await refuse(h, `${Q}&_cursor=garbage`);
    const [payload, tag] = cursor.split('.');
    const state = JSON.parse(Buffer.from(payload!, 'base64url').toString());
    const forged = Buffer.from(JSON.stringify({ ...state, afterId: '00000000-0000-4000-8000-000000000000' })).toString('base64url');
    await refuse(h, `${Q}&_cursor=${forged}.${tag}`);
    // The tag's last two characters changed (never to what they were: a tag ending in AA stayed valid once in 4,096 runs).
    await refuse(h, `${Q}&_cursor=${payload}.${tag!.slice(0, -2)}${tag!.endsWith('AA') ? 'BB' : 'AA'}`);
  });

  it('refuses a cursor from another server instance', async () => {
    const other = await harness();
    await refuse(other, `${Q}&_cursor=${await firstCursor()}`);
  });

  it('refuses a cursor replayed by another organization or with other search parameters', async () => {
    for (const cursorEncoding of ['base64', 'handle'] as const) {
      const hh = await harness({ modes: { cursorEncoding } });
      const cursor = await firstCursor(hh);
      await refuse(hh, `${Q}&_cursor=${cursor}`, 'org-b');
      await refuse(hh, `patient=${IDS.patientDeceased}&_cursor=${cursor}`);
      await refuse(hh, `${Q}&_cursor=${cursor}x`);
      expect((await hh.call('MedicationRequest.search', { query: `${Q}&_cursor=${cursor}&_count=5` })).status).toBe(200);
    }
  });

  it('surfaces cursor problems as FhirError, not crashes', async () => {
    const { search } = await directSearch();
    await expect(search(`${Q}&_cursor=%00%01`)).rejects.toBeInstanceOf(FhirError);
  });
});
