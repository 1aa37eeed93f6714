import { describe, expect, test } from 'vitest';
import { XMLParser, XMLValidator } from 'fast-xml-parser';
import { buildReport, renderJunit } from '../../src/report/index.js';
import { syntheticRun } from './synthetic-run.js';

type Node = Record<string, unknown>;
const asArray = <T>(v: T | T[] | undefined): T[] => (v === undefined ? [] : Array.isArray(v) ? v : [v]);

describe('renderJunit', () => {
  const doc = buildReport(syntheticRun(96));
  const xml = renderJunit(doc);
  const parsed = new XMLParser({ ignoreAttributes: false, attributeNamePrefix: '@', parseAttributeValue: false }).parse(xml);
  const root = parsed.testsuites as Node;
  const suites = asArray(root.testsuite as Node | Node[]);
  const cases = suites.flatMap((s) => asArray(s.testcase as Node | Node[]));

  test('is well-formed XML despite control characters, ]]> and </script> in the data', () => {
    expect(XMLValidator.validate(xml)).toBe(true);
    expect(xml).not.toMatch(/[\u0000-\u0008\u000B\u000C\u000E-\u001F]/);
    expect(xml).toContain('\\u0001');
    expect(xml).not.toContain(']]>');
  });

  test('counts in <testsuites> and per suite match the report', () => {
    const s = doc.summary.byOutcome;
    expect(root['@tests']).toBe(String(doc.summary.total));
    expect(root['@failures']).toBe(String(s.fail));
    expect(root['@errors']).toBe(String(s.error));
    expect(root['@skipped']).toBe(String(s.skip));
    expect(root['@time']).toBe('270.500');
    expect(suites).toHaveLength(Object.keys(doc.summary.byArea).length);
    for (const suite of suites) {
      const n = doc.summary.byArea[suite['@name'] as string]!;
      expect(suite['@tests']).toBe(String(n.pass + n.fail + n.error + n.skip + n.observation));
      expect(suite['@failures']).toBe(String(n.fail));
    }
  });

  test('one testcase per check with classname = area and name = "<id> — <title>"', () => {
    expect(cases).toHaveLength(doc.checks.length);
    const first = doc.checks[0]!;
    const tc = cases.find((c) => c['@name'] === `${first.id} — ${first.title}`)!;
    expect(tc['@classname']).toBe(first.area);
    expect(cases.filter((c) => c.failure !== undefined)).toHaveLength(doc.summary.byOutcome.fail);
    expect(cases.filter((c) => c.error !== undefined)).toHaveLength(doc.summary.byOutcome.error);
    expect(cases.filter((c) => c.skipped !== undefined)).toHaveLength(doc.summary.byOutcome.skip);
  });

  test('failure carries message, expected/actual, requirements and curl; tricky text survives escaping', () => {
    const failing = doc.checks.find((c) => c.outcome === 'fail' && c.message!.includes('</script>'))!;
    const tc = cases.find((c) => (c['@name'] as string).startsWith(failing.id))!;
    const failure = tc.failure as Node;
    expect(failure['@type']).toBe(failing.level);
    const body = String(failure['#text']);
    expect(body).toContain('Expected:');
    expect(body).toContain('"status": 404');
    expect(body).toContain(`Requirements: ${failing.requirements.join(', ')}`);
    expect(body).toContain("curl -sS -H 'Authorization: Bearer $TOKEN'");
    expect(String(failure['@message'])).toContain('x</script><script>alert(1)</script> & ]]>');
    expect(String(failure['@message'])).toContain('José Pérez 診療');
    expect(String(failure['@message'])).toContain('\\u0001\\u001b[31m');
  });

  test('observation is a passing testcase with the observed value in <system-out>', () => {
    const observed = doc.checks.find((c) => c.outcome === 'observation')!;
    const tc = cases.find((c) => (c['@name'] as string).startsWith(observed.id))!;
    expect(tc.failure).toBeUndefined();
    expect(String(tc['system-out'])).toContain('create.success-status = 201');
  });

  test('properties name the run id, target and profile', () => {
    const props = asArray((suites[0]!.properties as Node).property as Node | Node[]);
    const byName = Object.fromEntries(props.map((p) => [p['@name'], p['@value']]));
    expect(byName).toMatchObject({ 'run.id': doc.run.runId, target: 'https://fhir.example.test', profile: 'full' });
  });
});
