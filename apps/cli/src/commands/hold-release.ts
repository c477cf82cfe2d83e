import {
  adminActions,
  type EndHoldResult,
  openUnitOfWork,
  type ReleaseAnswer,
  releaseHold,
  resolveUserId,
  runAuditedAction,
} from '@tally/billing-core';
import { baseEnvSchema, parseEnv } from '@tally/platform';
import { cliAuditRecord } from './audit-cli-action';
import { fail, printJson } from './output';
import { withDatabase } from './unreachable-server';

/** The error a release that did not happen answers (as `POST /admin/users/{userId}/holds/{id}/release` does). */
function refusalOf(result: EndHoldResult<ReleaseAnswer>, holdId: string): { code: string; message: string } | null {
  switch (result.kind) {
    case 'ended':
    case 'already':
      return null;
    case 'not-active':
      return { code: 'hold_not_active', message: `hold ${holdId} is ${result.status}` };
    case 'not-found':
      return { code: 'not_found', message: `no hold ${holdId} for this user` };
    case 'too-much':
      return { code: 'invalid_request', message: 'a release takes no amount' };
  }
}

/**
 * `tally hold release <userId> <holdId>`: support's release of a hold (docs/holds.md "Support"),
 * like `POST /admin/users/{userId}/holds/{holdId}/release`: `releaseHold` for the canonical user,
 * its audit row (surface cli) in the release's transaction. Releasing a released hold answers
 * the first release. What the release posts (a take-back shortfall it settles) is left to the
 * relay (the CLI hands nothing to the queue).
 */
export async function runHoldRelease(
  userId: string,
  holdId: string,
  options: { note?: string; json?: boolean } = {},
): Promise<void> {
  const env = parseEnv(baseEnvSchema.pick({ DATABASE_URL: true }), process.env);
  await withDatabase(env.DATABASE_URL, async (db) => {
    const { result } = await runAuditedAction(
      db,
      async (trx) =>
        releaseHold(openUnitOfWork(trx, { lowBalanceThreshold: undefined, handOff: undefined }), {
          userId: await resolveUserId(trx, userId),
          holdId,
        }),
      (result) => {
        const refusal = refusalOf(result, holdId);
        return cliAuditRecord({
          action: adminActions.holdRelease,
          target: { kind: 'hold', id: holdId },
          request: { params: { userId, holdId }, body: { note: options.note } },
          // guard: cli-release-audit-outcome
          outcome: refusal?.code ?? 'ok',
          answer: refusal === null && 'answer' in result ? result.answer : { error: refusal },
        });
      },
    );
    const refusal = refusalOf(result, holdId);
    if (refusal !== null || !('answer' in result)) {
      fail(options, refusal?.code ?? 'failed', refusal?.message ?? 'not released');
      return;
    }
    if (options.json) {
      // guard: cli-release-already
      printJson({ ...result.answer, alreadyReleased: result.kind === 'already' });
      return;
    }
    process.stdout.write(
      result.kind === 'ended'
        ? `released ${holdId} of ${userId}; available ${result.answer.available}\n`
        : `already released: ${holdId} (available then ${result.answer.available}); nothing more released\n`,
    );
  });
}
