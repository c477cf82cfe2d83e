import type { LedgerEntryRow } from '../db/schema';
import { postGiveBack } from '../ledger/give-back-tokens';
import { references } from '../references';
import { recoverShortfallsFromStudioRefund } from '../refunds/take-back-shortfalls';
import { uncountSpend } from '../spend-limits/uncount-spend';
import type { UnitOfWork } from '../unit-of-work/unit-of-work';

export type RefundStudioRequestResult =
  | { kind: 'refunded'; entry: LedgerEntryRow }
  | { kind: 'already-refunded'; entry: LedgerEntryRow }
  /** Nothing was debited (free tier): nothing to give back. */
  | { kind: 'no-debit' };

/**
 * Gives back what a studio request's debit took, inside the caller's transaction: posts
 * `studio:{publicId}:refund` for exactly the amount of the `studio:{publicId}:debit` ledger row,
 * and only when that row exists; the debit stops counting against the spend limits (uncountSpend).
 * Idempotent by reference: a second call (another replica, the
 * sweeper racing the worker) finds the refund posted and changes nothing. Stamps refunded_at.
 * Throws LedgerReferenceConflictError if a refund with another amount exists (a bug, never retried).
 */
export async function refundStudioRequest(
  uow: UnitOfWork,
  request: { id: number; publicId: string },
): Promise<RefundStudioRequestResult> {
  const { trx } = uow;
  const debit = await trx
    .selectFrom('ledger_entries')
    .selectAll()
    .where('reference', '=', references.studioDebit(request.publicId))
    .executeTakeFirst();
  if (!debit) return { kind: 'no-debit' };
  const posted = await postGiveBack(uow, {
    userId: debit.user_id,
    reference: references.studioRefund(request.publicId),
    amount: -debit.amount,
    reason: 'studio_refund',
    of: debit.reference,
  });
  if (posted.kind === 'posted') {
    // A generation given back is not spent: it stops counting against the spend limits.
    // guard: studio-refund-uncounts-spend
    await uncountSpend(trx, debit);
  }
  // guard: studio-refund-settles-shortfall
  if (posted.kind === 'posted') {
    // Tokens a refund or chargeback could not take because this debit held them come back now:
    // they settle that shortfall instead of staying in the wallet (docs/stripe.md).
    await recoverShortfallsFromStudioRefund(uow, {
      userId: debit.user_id,
      requestPublicId: request.publicId,
      debitEntryId: debit.id,
      // What came back to a voided lot was taken again at once: only the rest is there to settle with.
      refundedTokens: -debit.amount - posted.voidTaken,
    });
  }
  await trx
    .updateTable('studio_requests')
    .set({ refunded_at: posted.entry.created_at })
    .where('id', '=', request.id)
    .where('refunded_at', 'is', null)
    .execute();
  return posted.kind === 'posted'
    ? { kind: 'refunded', entry: posted.entry }
    : { kind: 'already-refunded', entry: posted.entry };
}
