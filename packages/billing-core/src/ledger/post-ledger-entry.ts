import type { UnitOfWork } from '../unit-of-work/unit-of-work';
import { ensureWallet } from './ensure-wallet';
import { assertPostable, type LedgerPosting, type PostLedgerEntryResult } from './ledger-posting';
import { finishPosting } from './posting-answers';
import { lockWalletAndInsert } from './posting-statement';

export type { LedgerPosting, PostLedgerEntryResult } from './ledger-posting';
export { closeLotGap, createLot, type LotExpiry, type LotMovement, openingLotSource, plainLots } from './lots';

/**
 * Moves a wallet's balance by one ledger row, inside the caller's unit of work.
 *
 * Invariants: the wallet row is locked first, so balance_before is the balance every concurrent
 * writer sees; the insert uses ON CONFLICT (reference) DO NOTHING, so a second posting with the
 * same reference (another replica, a replay, a retried job) changes nothing and returns the
 * first entry as `already-posted`. The database trigger moves the cached wallet balance to
 * balance_after. The same statement writes the entry's app webhook messages (wallet.credited or
 * wallet.debited, or wallet.credits_expired for the expiry sweeper's entry, and wallet.balance_low on a crossing of the outbox's threshold): only for an
 * entry it posts, never for `already-posted`; the unit of work records them and hands them off
 * after its commit. The entry's lots move right after (applyLotMovement: the credit's lot, the
 * debit's draws, the give-back's returns), still under the wallet lock.
 *
 * Idempotent by reference. Throws LedgerReferenceConflictError when the reference already posts
 * a different user or amount (never a silent "already posted"), InsufficientBalanceError when a
 * debit would go below zero, and RangeError for a zero or non-integer amount.
 */
export async function postLedgerEntry(uow: UnitOfWork, posting: LedgerPosting): Promise<PostLedgerEntryResult> {
  assertPostable(posting);
  // One round trip in the common case: lock the wallet, look the reference up and insert the entry
  // with its messages, all in one statement. A wallet that does not exist yet is created, then
  // the statement runs again.
  let outcome = await lockWalletAndInsert(uow.trx, uow.outbox, posting);
  if (!outcome) {
    await ensureWallet(uow, posting.userId);
    outcome = await lockWalletAndInsert(uow.trx, uow.outbox, posting);
    if (!outcome) throw new Error(`wallet ${posting.userId} was created but cannot be locked`);
  }
  return finishPosting(uow, posting, outcome);
}
