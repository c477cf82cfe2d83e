import type { LedgerEntryRow } from '../db/schema';
import type { UnitOfWork } from '../unit-of-work/unit-of-work';
import { type LedgerPosting, postLedgerEntry } from './post-ledger-entry';
import { takeFreedVoidedTokens } from './voided-lots';

export type GiveBackResult =
  /** `voidTaken`: what returned to voided lots and was taken again at once; the wallet gained only the rest. */
  { kind: 'posted'; entry: LedgerEntryRow; voidTaken: number } | { kind: 'already-posted'; entry: LedgerEntryRow };

/**
 * Gives tokens back to the lots a debit drew from (a failed generation's refund, a reinstated
 * chargeback): one credit entry with the `give-back` movement of `of`, returned in the order they
 * were drawn (docs/lots.md). A void is a standing state, so what returns to a voided lot is taken
 * again at once (takeFreedVoidedTokens) in the same unit of work. The one way a give-back is
 * posted (a unit test keeps it so). Idempotent by reference, as postLedgerEntry is.
 */
export async function postGiveBack(
  uow: UnitOfWork,
  posting: Omit<LedgerPosting, 'lots'> & { of: string },
): Promise<GiveBackResult> {
  const { of, ...rest } = posting;
  const posted = await postLedgerEntry(uow, { ...rest, lots: { kind: 'give-back', of } });
  if (posted.kind !== 'posted') return posted;
  // guard: give-back-takes-voided
  const voided = await takeFreedVoidedTokens(uow, posting.userId, { entryId: posted.entry.id });
  return { kind: 'posted', entry: posted.entry, voidTaken: voided.taken };
}
