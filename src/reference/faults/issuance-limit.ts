/** Faults caught by the issuance-limit suite: the token endpoint's 429 missing or malformed. */
import type { FaultDef, FaultResponse, FaultRequest } from './types.js';

function isIssuance429(res: FaultResponse, req: FaultRequest): boolean {
  return req.path === '/auth/token' && res.status === 429;
}

/** Rewrites issue[0] of an OperationOutcome body. */
function rewriteIssue(body: unknown, change: (issue: Record<string, unknown>) => Record<string, unknown>): unknown {
  const outcome = body as { issue?: Record<string, unknown>[] } | undefined;
  if (!outcome?.issue?.[0]) return body;
  return { ...outcome, issue: [change(outcome.issue[0]), ...outcome.issue.slice(1)] };
}

export const faults: FaultDef[] = [
  {
    name: 'issuance-limit-not-enforced',
    area: 'issuance-limit',
    violates: ['issuance-limit.twenty-per-minute', 'issuance-limit.excess-429'],
    symptom: 'POST /auth/token issues tokens without limit (headers still count).',
  },
  {
    name: 'issuance-limit-wrong-code',
    area: 'issuance-limit',
    violates: ['issuance-limit.excess-429'],
    symptom: 'The token endpoint\'s 429 carries HPB-00121 (sandbox volume cap) instead of HPB-00105.',
    transformResponse: (res, req) =>
      !isIssuance429(res, req) ? res : {
        ...res,
        body: rewriteIssue(res.body, (issue) => ({
          ...issue,
          diagnostics: String(issue.diagnostics).replace('HPB-00105', 'HPB-00121'),
          details: { coding: [{ system: (issue.details as { coding: { system: string }[] }).coding[0]!.system, code: 'HPB-00121' }] },
        })),
      },
  },
  {
    name: 'issuance-limit-not-throttled',
    area: 'issuance-limit',
    violates: ['errors.throttled-code'],
    symptom: 'The token endpoint\'s 429 has issue code too-costly instead of throttled.',
    transformResponse: (res, req) => (!isIssuance429(res, req) ? res : { ...res, body: rewriteIssue(res.body, (issue) => ({ ...issue, code: 'too-costly' })) }),
  },
  {
    name: 'issuance-limit-no-retry-after',
    area: 'issuance-limit',
    violates: ['rate-limit.retry-after', 'catalog.hpb-00105'],
    symptom: 'The token endpoint\'s 429 has no Retry-After header.',
    transformResponse: (res, req) =>
      !isIssuance429(res, req) ? res : { ...res, headers: Object.fromEntries(Object.entries(res.headers).filter(([k]) => k.toLowerCase() !== 'retry-after')) },
  },
  {
    name: 'issuance-retry-after-too-short',
    area: 'issuance-limit',
    violates: ['catalog.hpb-00105', 'issuance-limit.fixed-window'],
    symptom: 'The token endpoint\'s 429 says Retry-After: 0 although the window lasts longer; a request after that wait is refused again.',
    transformResponse: (res, req) => (!isIssuance429(res, req) ? res : { ...res, headers: { ...res.headers, 'Retry-After': '0' } }),
  },
];
