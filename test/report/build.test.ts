import { describe, expect, test } from 'vitest';
import { Ajv } from 'ajv';
import addFormatsModule from 'ajv-formats';
import { readFileSync } from 'node:fs';
import type { Outcome, RunResult } from '../../src/engine/types.js';
import { buildReport, REPORT_FORMAT_VERSION, REPORT_SCHEMA_URL, reportSchemaErrors, rollupRequirement } from '../../src/report/index.js';
import type { RequirementOutcome } from '../../src/report/index.js';
import { syntheticRun } from './synthetic-run.js';

describe('rollupRequirement', () => {
  const cases: Array<[Outcome[], RequirementOutcome]> = [
    [[], 'untested'],
    [['skip'], 'skip'],
    [['observation'], 'observation'],
    [['observation', 'observation'], 'observation'],
    // Observations aside: the skipped check decides.
    [['skip', 'observation'], 'skip'],
    [['observation', 'pass'], 'pass'],
    // A pass next to a skip is not a pass: the rule is only partly verified.
    [['observation', 'pass', 'skip'], 'partial'],
    [['pass', 'skip'], 'partial'],
    [['skip', 'skip', 'pass'], 'partial'],
    [['pass', 'error'], 'error'],
    [['pass', 'skip', 'error'], 'error'],
    [['error', 'fail', 'pass'], 'fail'],
    [['skip', 'fail'], 'fail'],
    [['pass', 'pass'], 'pass'],
  ];
  test.each(cases)('%j -> %s', (outcomes, expected) => {
    expect(rollupRequirement(outcomes)).toBe(expected);
  });
});

describe('buildReport', () => {
  const run = syntheticRun(120);
  const doc = buildReport(run);

  test('carries the format version and counts every outcome', () => {
    expect(doc.formatVersion).toBe(REPORT_FORMAT_VERSION);
    expect(doc.summary.total).toBe(120);
    const byOutcome = { pass: 0, fail: 0, skip: 0, error: 0, observation: 0 };
    for (const c of run.checks) byOutcome[c.outcome]++;
    expect(doc.summary.byOutcome).toEqual(byOutcome);
    const areaTotal = Object.values(doc.summary.byArea).reduce((t, n) => t + n.pass + n.fail + n.skip + n.error + n.observation, 0);
    expect(areaTotal).toBe(120);
  });

  test('derives requirement verdicts from the checks that cite them', () => {
    const req = doc.requirements.find((r) => r.id === 'REQ-005')!;
    const cited = run.checks.filter((c) => c.requirements.includes('REQ-005'));
    expect(req.checks).toEqual(cited.map((c) => c.id).sort());
    expect(req.outcome).toBe(rollupRequirement(cited.map((c) => c.outcome)));
    expect(doc.requirements.find((r) => r.id === 'REQ-045')!.outcome).toBe('untested');
    const counted = Object.values(doc.summary.requirements).reduce((a, b) => a + b, 0);
    expect(counted).toBe(doc.requirements.length);
  });

  test('flattens observations with the check id', () => {
    const observed = run.checks.filter((c) => c.outcome === 'observation');
    expect(doc.observations).toHaveLength(observed.length);
    expect(doc.observations[0]).toEqual({ check: expect.any(String), key: 'create.success-status', value: 201, note: 'spec: not shown' });
  });

  test('is deterministic: input order and key order do not change the JSON', () => {
    const shuffled: RunResult = {
      ...run,
      checks: [...run.checks].reverse().map((c) => Object.fromEntries(Object.entries(c).reverse()) as typeof c),
      requirements: [...run.requirements].reverse(),
    };
    expect(JSON.stringify(buildReport(shuffled))).toBe(JSON.stringify(doc));
    expect(Object.keys(doc.checks[0]!).slice(0, 3)).toEqual(['id', 'title', 'area']);
  });

  test('sorts checks by area then id', () => {
    const keys = doc.checks.map((c) => `${c.area}|${c.id}`);
    expect(keys).toEqual([...keys].sort());
  });

  test('masks secrets that slipped past the HTTP layer', () => {
    const jwt = 'eyJhbGciOiJFUzM4NCJ9.eyJzdWIiOiJjb25mb3JtYW5jZS1tYWluIn0.c2lnbmF0dXJlLXZhbHVl';
    const leaky = syntheticRun(3);
    leaky.checks[0]!.message = `token ${jwt} rejected`;
    leaky.checks[0]!.evidence[0]!.request.headers.authorization = 'Bearer opaque-access-token-123456';
    leaky.checks[0]!.evidence[0]!.request.body = `client_assertion=${jwt}&grant_type=client_credentials`;
    const text = JSON.stringify(buildReport(leaky));
    expect(text).not.toContain(jwt);
    expect(text).not.toContain('opaque-access-token-123456');
    expect(text).toContain('Bearer $TOKEN');
    expect(text).toContain('client_assertion=[redacted]');
  });
});

describe('report.schema.json', () => {
  test('is a valid draft-07 schema that accepts a built report', () => {
    const ajv = new Ajv({ strict: true, allErrors: true });
    addFormatsModule.default(ajv);
    const validate = ajv.compile(JSON.parse(readFileSync(REPORT_SCHEMA_URL, 'utf8')));
    const doc = buildReport(syntheticRun(50));
    expect(validate(JSON.parse(JSON.stringify(doc))), JSON.stringify(validate.errors)).toBe(true);
  });

  test('rejects a report with a wrong outcome and names the field', () => {
    const doc = JSON.parse(JSON.stringify(buildReport(syntheticRun(5))));
    doc.checks[2].outcome = 'maybe';
    delete doc.summary.total;
    const errors = reportSchemaErrors(doc);
    expect(errors).toContain("summary: must have required property 'total'");
    expect(errors.some((e) => e.startsWith('checks.2.outcome: must be equal to one of the allowed values'))).toBe(true);
  });
});
