import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { execFile } from 'node:child_process';
import { existsSync, readFileSync, statSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { promisify } from 'node:util';
import { buildReport, checkCurl, writeReports } from '../../src/report/index.js';
import type { ReportDocument } from '../../src/report/types.js';
import { CHROMIUM, launch, type Page } from './cdp.js';
import { syntheticRun } from './synthetic-run.js';

const run = promisify(execFile);
const work = await mkdtemp(join(tmpdir(), 'report-chromium-'));
afterAll(() => rm(work, { recursive: true, force: true }));

function chromiumArgs(extra: string[], url: string): string[] {
  return [
    '--headless',
    '--no-sandbox',
    '--disable-gpu',
    '--disable-dev-shm-usage',
    '--no-first-run',
    '--disable-background-networking',
    '--disable-component-update',
    '--disable-sync',
    `--user-data-dir=${join(work, 'profile')}`,
    '--window-size=1400,1800',
    ...extra,
    url,
  ];
}

/** Outcome, id and visibility of the check rows, in page order. */
interface Row {
  id: string;
  outcome: string;
  hidden: boolean;
}
const ROWS = `[...document.querySelectorAll('#check-list > .check')].map((r) => ({ id: r.id.slice(6), outcome: r.getAttribute('data-outcome'), hidden: r.hidden }))`;
const visibleOutcomes = async (page: Page): Promise<string[]> =>
  [...new Set((await page.evaluate<Row[]>(ROWS)).filter((r) => !r.hidden).map((r) => r.outcome))].sort();
const countText = (page: Page): Promise<string> => page.evaluate<string>(`document.getElementById('check-count').textContent`);
/** True when the element's top is inside the viewport, below the sticky bars. */
const inView = (selector: string): string =>
  `(() => { const r = document.querySelector(${JSON.stringify(selector)}).getBoundingClientRect(); return r.top >= 40 && r.top < innerHeight / 2; })()`;

describe.skipIf(!existsSync(CHROMIUM))(`report.html in headless Chromium (skipped: no ${CHROMIUM})`, () => {
  const result = syntheticRun(200);
  const doc: ReportDocument = buildReport(result);
  const count = (o: string): number => doc.checks.filter((c) => c.outcome === o).length;
  let url = '';
  let page: Page;

  beforeAll(async () => {
    const { files } = await writeReports(result, { reportsRoot: join(work, 'reports') });
    url = pathToFileURL(files.html).href;
    page = await launch();
  }, 60_000);
  afterAll(() => page?.close());

  test('renders the check list with its script, expands failures, takes a non-trivial screenshot', { timeout: 90_000 }, async () => {
    const png = join(work, 'shot.png');
    await run(CHROMIUM, chromiumArgs([`--screenshot=${png}`], url), { timeout: 60_000 });
    expect(existsSync(png)).toBe(true);
    expect(statSync(png).size).toBeGreaterThan(20_000);
    expect(readFileSync(png).subarray(1, 4).toString()).toBe('PNG');

    const { stdout: dom } = await run(CHROMIUM, chromiumArgs(['--dump-dom'], url), { timeout: 60_000, maxBuffer: 64 * 1024 * 1024 });
    expect(dom).toContain('data-ready="true"');
    expect(dom.match(/<div class="check o-(pass|fail|error|skip|observation)"/g)).toHaveLength(200);
    expect(dom).toContain('Showing 200 of 200 checks');
    const problems = result.checks.filter((c) => c.outcome === 'fail' || c.outcome === 'error').length;
    expect(dom.match(/<div class="check-body">/g)).toHaveLength(problems);
    expect(dom).toContain('expected 404 with HPB-00102, got 500 x&lt;/script&gt;&lt;script&gt;alert(1)');
    expect(dom).not.toContain('<script>alert(1)');
  });

  test('lists failures first, then errors, then skips, then passes and observations', { timeout: 60_000 }, async () => {
    await page.open(url);
    const rank: Record<string, number> = { fail: 0, error: 1, skip: 2, pass: 3, observation: 3 };
    const rows = await page.evaluate<Row[]>(ROWS);
    expect(rows).toHaveLength(200);
    const ranks = rows.map((r) => rank[r.outcome]!);
    expect(ranks).toEqual([...ranks].sort((a, b) => a - b));
    expect(rows[0]!.outcome).toBe('fail');
    // Within a group, the report's order (area, then id).
    const passes = rows.filter((r) => rank[r.outcome] === 3).map((r) => r.id);
    expect(passes).toEqual(doc.checks.filter((c) => rank[c.outcome] === 3).map((c) => c.id));
  });

  test('the outcome chips filter: one shows only its outcome, several combine, again or "all" resets', { timeout: 60_000 }, async () => {
    await page.open(url);
    expect(await countText(page)).toBe('Showing 200 of 200 checks');

    await page.click('.chip[data-outcome="fail"]');
    expect(await visibleOutcomes(page)).toEqual(['fail']);
    expect(await countText(page)).toBe(`Showing ${count('fail')} of 200 checks`);
    expect(await page.evaluate(`document.querySelector('.chip[data-outcome="fail"]').getAttribute('aria-pressed')`)).toBe('true');
    expect(await page.evaluate(`document.querySelector('.chip[data-outcome=""]').getAttribute('aria-pressed')`)).toBe('false');

    await page.click('.chip[data-outcome="error"]');
    expect(await visibleOutcomes(page)).toEqual(['error', 'fail']);
    expect(await countText(page)).toBe(`Showing ${count('fail') + count('error')} of 200 checks`);

    await page.click('.chip[data-outcome="fail"]');
    expect(await visibleOutcomes(page)).toEqual(['error']);

    await page.click('.chip[data-outcome=""]');
    expect(await countText(page)).toBe('Showing 200 of 200 checks');
    expect(await page.evaluate(`document.querySelector('.chip[data-outcome=""]').getAttribute('aria-pressed')`)).toBe('true');

    await page.click('.chip[data-outcome="skip"]');
    await page.click('.chip[data-outcome="skip"]');
    expect(await countText(page)).toBe('Showing 200 of 200 checks');

    // A summary card shows only its outcome, too; with the area selector the filters combine.
    await page.click('.card[data-filter-outcome="pass"]');
    expect(await visibleOutcomes(page)).toEqual(['pass']);
    await page.evaluate(`(() => { const s = document.getElementById('check-area'); s.value = 'auth'; s.dispatchEvent(new Event('change')); })()`);
    const shown = (await page.evaluate<Row[]>(ROWS))
      .filter((r) => !r.hidden)
      .map((r) => r.id)
      .sort();
    expect(shown).toEqual(
      doc.checks
        .filter((c) => c.outcome === 'pass' && c.area === 'auth')
        .map((c) => c.id)
        .sort(),
    );
  });

  test('report.html#check-<id> opens that check and scrolls to it, even when filters hid it', { timeout: 60_000 }, async () => {
    const target = doc.checks.filter((c) => c.outcome === 'pass').at(-1)!;
    await page.open(`${url}#check-${encodeURIComponent(target.id)}`);
    const selector = `[id="check-${target.id}"]`;
    expect(await page.evaluate(`document.querySelector('${selector}').getAttribute('aria-expanded')`)).toBe('true');
    expect(await page.evaluate(inView(selector))).toBe(true);
    expect(await page.evaluate(`document.querySelector('${selector}').matches(':target')`)).toBe(true);

    // Its rebuilt curl is the one the report stands for.
    const shownCurl = await page.evaluate<string>(`document.querySelector('${selector} .check-body .curl pre').textContent`);
    expect(shownCurl).toBe(checkCurl(doc, target));

    // Hidden by a filter, a link from the requirement table still reveals it.
    await page.click('.chip[data-outcome="fail"]');
    expect(await page.evaluate(`document.querySelector('${selector}').hidden`)).toBe(true);
    await page.evaluate(`history.replaceState(null, '', '#')`);
    await page.click(`#requirements a[href="#check-${target.id}"]`);
    await waitUntil(page, `!document.querySelector('${selector}').hidden`);
    expect(await countText(page)).toBe('Showing 200 of 200 checks');
    await waitUntil(page, inView(selector));

    // Each check has a link to itself.
    expect(await page.evaluate(`document.querySelector('${selector} > a.plink').getAttribute('href')`)).toBe(`#check-${encodeURIComponent(target.id)}`);
    expect(await page.evaluate(`document.querySelector('${selector} .copy-link').textContent`)).toBe('Copy link');
  });

  test('report.html#req-<id> points at the requirement row; its id is a link to itself', { timeout: 60_000 }, async () => {
    const req = doc.requirements.at(-5)!;
    await page.open(`${url}#req-${encodeURIComponent(req.id)}`);
    const selector = `[id="req-${req.id}"]`;
    expect(await page.evaluate(`document.querySelector('${selector}').matches(':target')`)).toBe(true);
    await waitUntil(page, inView(selector));
    expect(await page.evaluate(`document.querySelector('${selector} a.plink').getAttribute('href')`)).toBe(`#req-${req.id}`);
  });
});

describe.skipIf(!existsSync(CHROMIUM))(`the run timeline in headless Chromium (skipped: no ${CHROMIUM})`, () => {
  const result = syntheticRun(60);
  const doc: ReportDocument = buildReport(result);
  const tl = doc.timeline!;
  const limits = doc.checks.find((c) => c.area === 'limits')!;
  let url = '';
  let page: Page;
  let bytes = 0;

  beforeAll(async () => {
    const { files } = await writeReports(result, { reportsRoot: join(work, 'timeline') });
    url = pathToFileURL(files.html).href;
    bytes = statSync(files.html).size;
    page = await launch({ width: 1400, height: 1000 });
  }, 60_000);
  afterAll(() => page?.close());

  /** Pixels of one colour (within a tolerance) on a lane's chart canvas. */
  const pixels = (lane: string, rgb: [number, number, number]): string => `(() => {
    const c = document.querySelector('.tl-lane[data-lane="${lane}"] canvas');
    const d = c.getContext('2d').getImageData(0, 0, c.width, c.height).data;
    let n = 0;
    for (let i = 0; i < d.length; i += 4) if (Math.abs(d[i] - ${rgb[0]}) < 12 && Math.abs(d[i + 1] - ${rgb[1]}) < 12 && Math.abs(d[i + 2] - ${rgb[2]}) < 12) n++;
    return n;
  })()`;

  test('draws one chart per lane that carried requests, each a canvas of real size with its points, and a legend', { timeout: 60_000 }, async () => {
    await page.open(url);
    const lanes = await page.evaluate<Array<{ lane: string; requests: number; tokens: number; w: number; h: number }>>(
      `[...document.querySelectorAll('#timeline-charts .tl-lane')].map((b) => { const c = b.querySelector('canvas').getBoundingClientRect(); return { lane: b.dataset.lane, requests: Number(b.dataset.requests), tokens: Number(b.dataset.tokens), w: c.width, h: c.height }; })`,
    );
    expect(lanes.map((l) => [l.lane, l.requests, l.tokens])).toEqual([
      ['main', 71, 6],
      ['token endpoint', 8, 0],
      ['no key', 3, 0],
    ]);
    for (const l of lanes) {
      expect(l.w).toBeGreaterThan(1000);
      expect(l.h).toBeGreaterThan(100);
    }
    // Each lane's answers are drawn: green 2xx points everywhere, the 401 (purple) and the 429s (red) on main.
    for (const lane of ['main', 'token endpoint', 'no key']) expect(await page.evaluate<number>(pixels(lane, [26, 127, 55])), lane).toBeGreaterThan(20);
    expect(await page.evaluate<number>(pixels('main', [130, 80, 223]))).toBeGreaterThan(20);
    expect(await page.evaluate<number>(pixels('main', [207, 34, 46]))).toBeGreaterThan(20);
    const legend = await page.evaluate<string>(`document.querySelector('#timeline .tl-legend').textContent`);
    for (const label of ['2xx/3xx', '401/403', '429', 'no answer', 'declared ceiling', 'Retry-After asked', 'token lifetime']) expect(legend).toContain(label);
    expect(await page.evaluate<string>(`document.getElementById('timeline-range').textContent`)).toBe('Showing 0:00 – 1:33.5 of 1:33.5');
    expect(await page.evaluate<string>(`document.querySelector('.tl-lane[data-lane="main"] .tl-title').textContent`)).toContain('ceiling 60 per 60 s');
  });

  test("a timing check's evidence links to its stretch: the charts zoom to it and mark it", { timeout: 60_000 }, async () => {
    await page.open(`${url}#check-${encodeURIComponent(limits.id)}`);
    const link = `[id="check-${limits.id}"] .meta a.tl-link`;
    expect(await page.evaluate<string>(`document.querySelector('${link}').getAttribute('href')`)).toBe(
      `#timeline?from=1&to=28.6&key=main&check=${encodeURIComponent(limits.id)}`,
    );
    expect(await page.evaluate<string>(`document.querySelector('${link}').textContent`)).toBe('On the timeline: 27.6 s on main');
    await page.click(link);
    await waitUntil(page, `document.getElementById('timeline-range').textContent.includes('marked')`);
    // The stretch with a 10 % margin, every chart alike; the key's chart is the one in focus.
    expect(await page.evaluate<string>(`document.getElementById('timeline-range').textContent`)).toBe(
      `Showing 0:00 – 0:31.4 of 1:33.5 · marked: ${limits.id}, 0:01 – 0:28.6 on main`,
    );
    expect(await page.evaluate<string[]>(`[...document.querySelectorAll('.tl-lane.tl-focus')].map((b) => b.dataset.lane)`)).toEqual(['main']);
    await waitUntil(page, inView('.tl-lane[data-lane="main"]'));
    // Reset shows the whole run again.
    await page.click('#timeline-reset');
    expect(await page.evaluate<string>(`document.getElementById('timeline-range').textContent`)).toBe('Showing 0:00 – 1:33.5 of 1:33.5');
  });

  test('the report stays self-contained and small', () => {
    expect(bytes).toBeLessThan(1_500_000);
    expect(tl.requests.sent).toHaveLength(82);
  });
});

async function waitUntil(page: Page, expression: string, ms = 5000): Promise<void> {
  const until = Date.now() + ms;
  while (!(await page.evaluate<boolean>(`Boolean(${expression})`))) {
    if (Date.now() > until) throw new Error(`timed out waiting for ${expression}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}
