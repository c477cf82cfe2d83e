import {
  disableAutoTopup,
  handOffCommitted,
  openUnitOfWork,
  resolveUserId,
  type UnitOfWork,
} from '@tally/billing-core';
import type { AuditAnswer, AuditedTransaction } from '../../http/audit-admin-actions';
import type { LotActionDeps } from './lot-actions';

/**
 * Support turns a user's auto top-up off (admin API and console): `disableAutoTopup` for the
 * canonical user of the path's id, in one transaction with the request's audit row
 * (`auto_topup.disable`), so the change, its `wallet.auto_topup_disabled` message and the row
 * commit together; the message is handed off after the commit. Answers whether it was on.
 */
export async function runAutoTopupDisable(
  audited: AuditedTransaction,
  deps: LotActionDeps,
  userId: string,
  answerOf: (disabled: boolean) => AuditAnswer,
): Promise<boolean> {
  let uow: UnitOfWork | undefined;
  const disabled = await audited(async (trx) => {
    uow = openUnitOfWork(trx, deps.outbox);
    return disableAutoTopup(uow, await resolveUserId(trx, userId));
  }, answerOf);
  await handOffCommitted(deps.outbox, uow);
  return disabled;
}
