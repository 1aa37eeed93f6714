/**
 * The Encounter, DocumentReference and tenancy checks pass on the clean
 * reference in its alternative-conformant modes, and each fault of these areas
 * names checks of these suites. That each planted fault makes the checks it
 * names fail is the mutation shards' assertion (test/mutation/faults-1.test.ts,
 * faults-2.test.ts: every named check of every fault fails), not repeated here.
 */
import { describe, expect, it } from 'vitest';
import encounterChecks from '../../suites/encounter/checks.js';
import documentChecks from '../../suites/document-reference/checks.js';
import tenancyChecks from '../../suites/tenancy/checks.js';
import { operationsCheck } from '../../suites/rate-limit/operations-check.js';
import { FAULTS } from '../../src/reference/faults/index.js';
import { describeResults, runChecks } from '../medication-request/target.js';
import { EMBEDDED_LIMITS } from '../../src/run/embedded.js';

const checks = [...encounterChecks, ...documentChecks, ...tenancyChecks, operationsCheck];
const byId = new Map(checks.map((c) => [c.id, c]));
/** The exhausting check runs on its own (it drives a key to its limit and waits for it). */
const quickChecks = checks.filter((c) => !c.tags?.includes('exhausts-key-limit'));

/** Fault -> the checks of these suites it must fail (each fault names them in `checks`). */
const CAUGHT_BY: Array<[string, string[]]> = FAULTS.filter((f) => ['encounter', 'tenancy'].includes(f.area) || f.name === 'encounter-throttled-wrong-code').map(
  (f) => [f.name, (f.checks ?? []).filter((id) => byId.has(id))],
);

const MODES = [
  {},
  { createStatus: 200, updateStatus: 201, validationStatus: 400, unknownDocumentCode: 'HPB-00102', uploadPath: '$binary-upload' },
  { etag: 'strong', tieBreak: 'uuid-desc', cursorEncoding: 'handle', countOver100: 'reject', patientBlockOn: 'create', uploadContract: 'type-query-binary' },
  { diagnosisOrder: 'reversed', orderBy: 'last-updated', orderDirection: 'descending', uploadContract: 'type-parameters' },
] as const;

/**
 * The one skip an upload contract causes: at instance level the upload names no patient (its record
 * has one), at type level it reaches no record of another organization by id.
 */
const skipAllowed = (modes: (typeof MODES)[number], line: string) =>
  'uploadContract' in modes && modes.uploadContract.startsWith('type-')
    ? /^document-reference\.upload-foreign-instance-404: skip \(not applicable: the \$upload contract is type level/.test(line)
    : /^tenancy\.foreign-patient-in-upload: skip \(the upload contract .* names no patient/.test(line);

describe('encounter, document-reference and tenancy checks on the clean reference', () => {
  it.each(MODES.map((m) => [JSON.stringify(m), m] as const))(
    'mode %s: no fail, no error, no skip',
    async (_label, modes) => {
      const results = await runChecks(quickChecks, { modes });
      const bad = describeResults(results).filter((l) => /: (fail|error|skip)/.test(l) && !skipAllowed(modes, l));
      expect(bad).toEqual([]);
      const observed = [...results.values()].filter((r) => r.level === 'observation');
      expect(observed.length).toBeGreaterThan(0);
      expect(observed.every((r) => r.outcome === 'observation' && r.observations.length > 0)).toBe(true);
    },
    180_000,
  );

  it('the exhausting check passes and leaves the key usable', async () => {
    // A ceiling a loaded machine can fill within the window (the embedded 1000 per 5 s needs ~200 requests a second).
    const limits = { ...EMBEDDED_LIMITS, perKeyPerWindow: 30, windowMs: 6000, tokenWindowMs: 6000, tokenLifetimeSec: 60 };
    const results = await runChecks([byId.get('rate-limit.operations-429')!, byId.get('encounter.read-shape')!], { profile: 'full', limits });
    expect(describeResults(results)).toEqual([expect.stringMatching(/: pass$/), expect.stringMatching(/: pass$/)]);
  }, 120_000);

  it('records the readings the target chose', async () => {
    const ids = ['document-reference.read-unknown-404', 'encounter.registration-window-422'];
    const results = await runChecks(
      ids.map((id) => byId.get(id)!),
      { modes: { unknownDocumentCode: 'HPB-00102' } },
    );
    const value = (id: string, key: string) => results.get(id)!.observations.find((o) => o.key === key)?.value;
    expect(value(ids[0]!, 'document-reference.not-found-code')).toBe('HPB-00102');
    expect(value(ids[1]!, 'encounter.registration-window')).toEqual({
      'create 1950': { status: 422, code: 'HPB-00139' },
      'create 2090': { status: 422, code: 'HPB-00139' },
      'update 2090': { status: 422, code: 'HPB-00139' },
    });
  }, 60_000);
});

describe('each planted fault is caught', () => {
  // Running each fault against the checks it names is the mutation shards' work (test/mutation/faults.ts).
  it('every fault of these areas names the checks it must fail', () => {
    expect(CAUGHT_BY.filter(([, ids]) => ids.length === 0).map(([name]) => name)).toEqual([]);
  });
});
