/**
 * Tenancy through a write's body: a create whose subject, encounter or participant names a record of
 * another organization. That id does not exist in the caller's organization, so the write must be
 * answered exactly as one naming a record that exists nowhere: whether the target resolves
 * references at all is its own (the spec shows no status for a write's reference), but a target
 * that refuses the one and accepts the other, or refuses them differently, resolves references
 * across organizations (a record hung on another organization's patient) or tells the caller the
 * id exists elsewhere.
 */
import { randomUUID } from 'node:crypto';
import { type CheckContext, type CheckDefinition, defineCheck } from '../../src/engine/index.js';
import { catalogCodeOf, createdIdOf, type Json, newRecordOf } from '../../src/service/index.js';
import { accepted, answered } from './support.js';

const area = 'tenancy';
const REQUIREMENT = 'tenancy.foreign-id-404';

interface Probe {
  release: 'R4' | 'R5';
  resource: 'MedicationRequest' | 'Encounter' | 'DocumentReference';
  /** The body field that names the record, and the record's type. */
  field: 'subject' | 'encounter' | 'participant';
  type: 'Patient' | 'Encounter' | 'Practitioner';
  /** Fixture key of the other organization's record of that type. */
  foreign: string;
}

const PROBES: Probe[] = [
  { release: 'R4', resource: 'MedicationRequest', field: 'subject', type: 'Patient', foreign: 'otherOrgPatient' },
  { release: 'R4', resource: 'MedicationRequest', field: 'encounter', type: 'Encounter', foreign: 'otherOrgEncounter' },
  { release: 'R4', resource: 'Encounter', field: 'subject', type: 'Patient', foreign: 'otherOrgPatient' },
  { release: 'R4', resource: 'Encounter', field: 'participant', type: 'Practitioner', foreign: 'otherOrgPractitioner' },
  { release: 'R5', resource: 'DocumentReference', field: 'subject', type: 'Patient', foreign: 'otherOrgPatient' },
];

/** The valid body of the probe's type with its field naming `Type/id` (the caller's own records elsewhere). */
function bodyNaming(ctx: CheckContext, p: Probe, id: string): Json {
  const reference = { reference: `${p.type}/${id}` };
  return { ...newRecordOf(ctx, p.release, p.resource), [p.field]: p.field === 'participant' ? [{ individual: reference }] : reference };
}

/** The fixture of the caller's own record the probe's field names in its control write. */
const OWN: Record<Probe['type'], string> = { Patient: 'patient', Encounter: 'encounter', Practitioner: 'practitioner' };

export const referenceCheck: CheckDefinition = defineCheck({
  id: 'tenancy.foreign-reference-in-write',
  surfaces: {
    release: 'R4, R5',
    resource: 'MedicationRequest (R4: subject, encounter), Encounter (R4: subject, participant), DocumentReference (R5: subject)',
    keyKind: "main, naming the second organization's records (fixtures otherOrgPatient, otherOrgEncounter, otherOrgPractitioner)",
    channel: "a reference in a create's body",
    leftOut: [
      "updates: a subject is immutable after creation (MedicationRequest, Encounter); an update's encounter or participant naming another organization's record is not tried",
      "the type-level $upload's patient (its query, its Parameters subject, its DocumentReference subject): tenancy.foreign-patient-in-upload",
      "the other direction (second-org naming main's records): the same rule from the other side, not sent",
    ],
  },
  title:
    "a create naming another organization's patient, encounter or practitioner is answered as one naming a record that exists nowhere: never accepted while that one is refused, never refused otherwise",
  area,
  level: 'MUST',
  requirements: [REQUIREMENT, 'tenancy.resources-belong-to-org'],
  quote: "An id that does not exist in the caller's organization gives 404.",
  tags: ['writes'],
  // Five surfaces: a write naming a record that exists nowhere, one naming the other organization's, the control.
  requests: 15,
  fixtures: ['patient', 'encounter', 'practitioner'],
  async run(ctx) {
    const checked: string[] = [];
    const notChecked: string[] = [];
    const answers: Record<string, unknown> = {};
    for (const p of PROBES) {
      const surface = `${p.release} ${p.resource}.${p.field}`;
      const op = ctx.findOperation(p.resource, 'create', p.release);
      if (!op?.scope) {
        notChecked.push(`${surface} (no published create${op ? ' scope' : ''})`);
        continue;
      }
      if (!ctx.hasFixture(p.foreign)) {
        notChecked.push(`${surface} (no fixture ${p.foreign})`);
        continue;
      }
      const write = async (id: string) => {
        const body = bodyNaming(ctx, p, id);
        // The first answer is the verdict: a 5xx is not retried away.
        const res = await ctx.fhir({ scopes: [op.scope!], method: 'POST', url: ctx.path(op.path, {}), body, retry: 'none' });
        const created = accepted(res) ? createdIdOf(res) : undefined;
        if (created) ctx.created(p.resource, created);
        return res;
      };
      // A record that exists nowhere, then the other organization's: the two answers must be alike.
      const nowhere = await write(randomUUID());
      const foreign = await write(ctx.fixture(p.foreign));
      answers[surface] = { nowhere: answered(nowhere), otherOrganization: answered(foreign) };
      const what = `the ${p.release} ${p.resource} create whose ${p.field} names another organization's ${p.type} (${ctx.fixture(p.foreign)})`;
      ctx.check(foreign.status < 500, `${what} answered ${answered(foreign)}`, {
        requirement: REQUIREMENT,
        expected: `as for a ${p.type} id that exists nowhere: ${answered(nowhere)}`,
        actual: answered(foreign),
        exchange: foreign.exchange.id,
      });
      if (foreign.status >= 500) {
        checked.push(surface);
        continue;
      }
      if (nowhere.status >= 500) {
        notChecked.push(`${surface} (a ${p.type} id that exists nowhere answered ${answered(nowhere)}: nothing to compare with)`);
        continue;
      }
      if (accepted(nowhere) && accepted(foreign)) {
        // References are not resolved: another organization's id is as unknown as any.
        checked.push(surface);
        continue;
      }
      const alike = nowhere.status === foreign.status && catalogCodeOf(nowhere) === catalogCodeOf(foreign);
      if (!alike) {
        checked.push(surface);
        ctx.check(
          false,
          accepted(foreign)
            ? `${what} was accepted (${answered(foreign)}) while one naming a ${p.type} id that exists nowhere was refused (${answered(nowhere)}): references are resolved in other organizations`
            : `${what} was answered ${answered(foreign)}, one naming a ${p.type} id that exists nowhere ${answered(nowhere)}: the answer tells the caller the id exists in another organization`,
          { requirement: REQUIREMENT, expected: answered(nowhere), actual: answered(foreign), exchange: foreign.exchange.id },
        );
        continue;
      }
      // Both refused alike: only meaningful when the same body naming the caller's own record is accepted.
      const own = await write(ctx.fixture(OWN[p.type]));
      if (!accepted(own)) {
        notChecked.push(
          `${surface} (the same body naming the caller's own ${p.type} was refused too, ${answered(own)}: nothing shows the refusals came from the reference)`,
        );
        continue;
      }
      checked.push(surface);
    }
    ctx.observe('tenancy.write-reference-answers', answers, 'how the target answers a reference to no record of the caller: its own choice (not shown)');
    ctx.observe('surfaces', { checked, ...(notChecked.length ? { notChecked } : {}) });
    if (checked.length === 0) ctx.skip(`no surface could be judged: ${notChecked.join('; ')}`);
  },
});
