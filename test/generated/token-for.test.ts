import { describe, expect, it } from 'vitest';
import { UnsecuredJWT } from 'jose';
import { tokenFor } from '../../src/service/tokens.js';
import type { CheckContext } from '../../src/engine/context.js';
import { CheckFailure, ConformanceError, SkipSignal } from '../../src/errors.js';

const jwt = (claims: Record<string, unknown>) => new UnsecuredJWT(claims).encode();

function ctxWith(grant: string[] | undefined, token: () => Promise<string>): CheckContext {
  return {
    client: () => ({ role: 'main', ...(grant ? { scopes: grant } : {}) }),
    token,
    fail: (message: string, details = {}) => {
      throw new CheckFailure(message, details);
    },
    skip: (reason: string) => {
      throw new SkipSignal(reason);
    },
  } as unknown as CheckContext;
}

const refused = () => Promise.reject(new ConformanceError('ERR_TOKEN', 'token request for client "main" failed: 403 HPB-00104'));
const MR_RS = 'system/MedicationRequest.rs';
const DOC_RS = 'system/DocumentReference.rs';

describe('tokenFor: a refused or narrowed token request', () => {
  it('fails when the config declares the client holds the scopes', async () => {
    await expect(tokenFor(ctxWith([MR_RS, DOC_RS], refused), [MR_RS])).rejects.toBeInstanceOf(CheckFailure);
    const narrowed = ctxWith([MR_RS, DOC_RS], async () => jwt({ scope: MR_RS }));
    await expect(tokenFor(narrowed, [MR_RS, DOC_RS])).rejects.toThrow(
      /grants system\/MedicationRequest.rs, not system\/DocumentReference.rs, which the client holds/,
    );
  });

  it('skips, saying why, when the grant is not declared or lacks the scope', async () => {
    await expect(tokenFor(ctxWith(undefined, refused), [MR_RS])).rejects.toThrow(SkipSignal);
    await expect(tokenFor(ctxWith(undefined, refused), [MR_RS])).rejects.toThrow(/clients\[\]\.scopes, is not declared/);
    await expect(tokenFor(ctxWith([MR_RS], refused), [DOC_RS])).rejects.toThrow(/not declared to hold them/);
    await expect(
      tokenFor(
        ctxWith(undefined, async () => jwt({ scope: MR_RS })),
        [MR_RS, DOC_RS],
      ),
    ).rejects.toThrow(SkipSignal);
  });

  it('hands the token over when it states the scopes, broader ones, or nothing (opaque)', async () => {
    for (const token of [jwt({ scope: `${MR_RS} ${DOC_RS}` }), jwt({ scope: 'system/MedicationRequest.cruds' }), jwt({ scp: [MR_RS] }), 'opaque-token']) {
      await expect(
        tokenFor(
          ctxWith([MR_RS], async () => token),
          [MR_RS],
        ),
      ).resolves.toBe(token);
    }
  });
});
