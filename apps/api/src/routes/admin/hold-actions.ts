import {
  type EndHoldResult,
  handOffCommitted,
  openUnitOfWork,
  type ReleaseAnswer,
  releaseHold,
  resolveUserId,
  type UnitOfWork,
} from '@tally/billing-core';
import type { AuditAnswer, AuditedTransaction } from '../../http/audit-admin-actions';
import type { LotActionDeps } from './lot-actions';

/**
 * Support's release of one hold (admin API and console): `releaseHold` for the canonical user of
 * the path's id, in one transaction with the request's audit row (`hold.release`). It answers as
 * the app's release does (a released hold answers its first release; captured or expired is 409
 * hold_not_active). What the freed tokens settle of a take-back shortfall is posted in that
 * transaction; its app webhooks are handed off after the commit.
 */
export async function runHoldRelease(
  audited: AuditedTransaction,
  deps: LotActionDeps,
  request: { userId: string; holdId: string },
  answerOf: (result: EndHoldResult<ReleaseAnswer>) => AuditAnswer,
): Promise<EndHoldResult<ReleaseAnswer>> {
  let uow: UnitOfWork | undefined;
  const result = await audited(async (trx) => {
    // guard: support-release-in-audit-transaction
    uow = openUnitOfWork(trx, deps.outbox);
    // guard: support-release-resolves-user
    return releaseHold(uow, { userId: await resolveUserId(trx, request.userId), holdId: request.holdId });
  }, answerOf);
  await handOffCommitted(deps.outbox, uow);
  return result;
}
