/**
 * Tenancy through `$upload` at instance level (spec: "An id that does not exist in the caller's
 * organization gives 404."): a document uploaded to another organization's DocumentReference id
 * reaches nothing. Only when the established `$upload` contract is instance level.
 */
import { type CheckDefinition, defineCheck } from '../../src/engine/index.js';
import { expectError, smallDocument } from '../../src/service/index.js';
import { requireContract, sendUpload } from '../../src/service/index.js';
import { area, RS } from './support.js';

export const uploadTenancyChecks: CheckDefinition[] = [
  defineCheck({
    id: 'document-reference.upload-foreign-instance-404',
    title: "an instance-level $upload to another organization's DocumentReference gives 404",
    area,
    level: 'MUST',
    requirements: ['tenancy.foreign-id-404'],
    quote: "An id that does not exist in the caller's organization gives 404.",
    tags: ['writes', 'conditional'],
    clients: ['second-org'],
    fixtures: ['patient', 'otherOrgDocumentReference'],
    surfaces: {
      release: 'R5',
      resource: 'DocumentReference',
      keyKind: 'main onto second-org',
      channel: '$upload at instance level',
      leftOut: ['a type-level $upload names no id: skipped'],
    },
    async run(ctx) {
      const contract = await requireContract(ctx);
      if (contract.form.level !== 'instance')
        ctx.skip(`not applicable: the $upload contract is type level (${contract.form.path}): no id of another organization to reach`);
      const id = ctx.fixture('otherOrgDocumentReference');
      const read = ctx.operation('DocumentReference', 'read', 'R5');
      // A 404 proves nothing unless the owner reads the record.
      const own = await ctx.fhir({ scopes: RS, role: 'second-org', url: ctx.path(read.path, { id }), share: true });
      if (own.status !== 200) ctx.skip(`otherOrgDocumentReference is not readable by its own organization's client (second-org: ${own.status})`);
      const res = await sendUpload(ctx, contract.form, id, smallDocument(contract.contentType), contract.contentType, { retry: 'none' });
      expectError(res, { status: 404, requirement: 'tenancy.foreign-id-404' });
    },
  }),
];
