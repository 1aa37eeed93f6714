/**
 * Bearer rules on every surface (spec: Authentication > Using a token): an invalid bearer token is
 * refused on every release and resource family the target publishes (derived from the operation
 * model), one probe each. A missing token is judged per operation by generated.*.no-token.
 */
import { type CheckDefinition, defineCheck } from '../../src/engine/index.js';
import { expectError, onSurface, surfaceLabel, surfaceProbeUrl, surfacesOf } from '../../src/service/index.js';
import { BEARER_401_CODES } from './support.js';

const BEARER_RULE = 'A missing or invalid bearer token gives 401 (generic code `SVC-00004`).';

export const surfaceChecks: CheckDefinition[] = [
  defineCheck({
    id: 'auth.invalid-bearer-401-every-surface',
    surfaces: {
      release: 'every published release (from the operation model)',
      resource: 'every published resource family, one probe each (its read of a random id, else its search)',
      leftOut: ['a missing token is judged per operation by generated.*.no-token'],
    },
    title: 'a garbage bearer token gives 401 SVC-00004 (or HPB-00106) on every published release and resource family',
    area: 'auth',
    level: 'MUST',
    requirements: ['auth.invalid-bearer-401', 'auth.bearer-401-code'],
    quote: BEARER_RULE,
    async run(ctx) {
      const surfaces = surfacesOf(ctx.model);
      if (surfaces.length === 0) ctx.skip('the target publishes no read or search operation');
      for (const s of surfaces) {
        const res = await ctx.request({ url: surfaceProbeUrl(s), token: 'not-a-valid-access-token', headers: { accept: 'application/fhir+json' } });
        onSurface(surfaceLabel(s), () => expectError(res, { status: 401, code: [...BEARER_401_CODES], requirement: 'auth.invalid-bearer-401' }));
      }
      ctx.observe('surfaces', { checked: surfaces.map(surfaceLabel) });
    },
  }),
];
