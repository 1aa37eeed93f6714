import { describe, expect, it } from 'vitest';
import type { TestSpecification } from 'vitest/node';
import { ConformanceSequencer, areaOfFile, areaRank } from '../../src/vitest/sequencer.js';

const spec = (rel: string) => ({ moduleId: `/work/project/suites/${rel}` }) as TestSpecification;

/** The suite files of the project, in no particular order. */
const FILES = [
  'token-lifetime/token-lifetime.suite.ts',
  'invariants/invariants.suite.ts',
  'rate-limit/rate-limit.suite.ts',
  'issuance-limit/issuance-limit.suite.ts',
  'auth/expiry.suite.ts',
  'pagination/pagination.suite.ts',
  'encounter/encounter.suite.ts',
  'rate-limit/headers.suite.ts',
  'auth/auth.suite.ts',
  'tenancy/tenancy.suite.ts',
  'discovery/discovery.suite.ts',
  'media-type/media-type.suite.ts',
];

async function order(files: string[]): Promise<string[]> {
  const sorted = await new ConformanceSequencer().sort(files.map(spec));
  return sorted.map((s) => s.moduleId.split('/suites/')[1]!);
}

describe('ConformanceSequencer', () => {
  it('runs discovery first, the rate-limit header checks while main has room, and the exhausting and waiting files last', async () => {
    const sorted = await order(FILES);
    expect(sorted.slice(0, 3)).toEqual(['discovery/discovery.suite.ts', 'rate-limit/headers.suite.ts', 'auth/auth.suite.ts']);
    expect(sorted.slice(-5)).toEqual([
      'rate-limit/rate-limit.suite.ts',
      'issuance-limit/issuance-limit.suite.ts',
      'auth/expiry.suite.ts',
      'token-lifetime/token-lifetime.suite.ts',
      'invariants/invariants.suite.ts',
    ]);
  });

  it('puts the tenancy checks (the other organization\'s key) well before that key is exhausted', async () => {
    const sorted = await order(FILES);
    expect(sorted.indexOf('tenancy/tenancy.suite.ts')).toBeLessThan(sorted.indexOf('encounter/encounter.suite.ts'));
  });

  it('is deterministic whatever the input order, and keeps an unknown area with the paced ones', async () => {
    const once = await order(FILES);
    expect(await order([...FILES].reverse())).toEqual(once);
    expect(areaRank('some-new-area')).toBe(areaRank('pagination'));
    expect(areaRank('some-new-area')).toBeLessThan(areaRank('rate-limit'));
  });

  it('slots files apart from their area only where named', () => {
    expect(areaOfFile('/p/suites/rate-limit/headers.suite.ts')).toBe('rate-limit:headers');
    expect(areaOfFile('/p/suites/rate-limit/rate-limit.suite.ts')).toBe('rate-limit');
    expect(areaOfFile('C:\\p\\suites\\auth\\expiry.suite.ts')).toBe('token-lifetime');
    expect(areaOfFile('/p/elsewhere/x.ts')).toBe('');
  });
});
