import type { LedgerEntryRow } from '../db/schema';
import { assertMovementFits, type LotDraw, type LotMovement } from './lots';

/** One movement of a wallet's balance as a writer asks for it (postLedgerEntry, postLedgerEntries). */
export interface LedgerPosting {
  userId: string;
  /** Deterministic reference from `references`; the database keeps it unique. */
  reference: string;
  /** Signed whole tokens: positive credits, negative debits. Never zero. */
  amount: number;
  /** Short machine-readable reason, e.g. `token_pack_purchase`. */
  reason: string;
  /** The inbox event that caused this entry, when there is one. */
  inboxEventId?: number | null;
  /**
   * Fields added to the entry's wallet.debited / wallet.credited data (a usage's or a priced
   * capture's `feature, variant, quantities, cost`: docs/app-webhooks.md). JSON values only.
   */
  messageData?: Readonly<Record<string, unknown>> | undefined;
  /**
   * What the entry does to the wallet's lots (docs/lots.md): a credit names its lot (category,
   * expiry), a debit whether it is a spend or a take-back, a give-back the debit it returns.
   * Required: forgetting a credit's lot is a compile error.
   */
  lots: LotMovement;
  /**
   * A paid credit (a pack, a top-up, period credits, an installment; a grant that asks): once
   * posted, it settles the wallet's debt first under DEBT_POLICY=settle (settleDebtFromCredit).
   */
  settlesDebt?: boolean;
}

/** The answer to one posting: an idempotent replay is an answer (`already-posted`), not an error. */
export type PostLedgerEntryResult =
  /**
   * `voidTaken`: of a give-back, what returned to voided lots and was taken again at once
   * (takeFreedVoidedTokens, docs/lots.md "Voids"); the wallet gained only the rest. `draws`: the
   * entry's `ledger_draws` as recorded (in their order), when it drew from or returned to lots.
   */
  | { kind: 'posted'; entry: LedgerEntryRow; voidTaken?: number; draws?: readonly LotDraw[] }
  | { kind: 'already-posted'; entry: LedgerEntryRow };

/** Throws RangeError for a zero or non-integer amount, and a movement that does not fit the amount. */
export function assertPostable(posting: LedgerPosting): void {
  if (!Number.isSafeInteger(posting.amount) || posting.amount === 0) {
    throw new RangeError(`ledger amount must be a non-zero whole number of tokens, got ${posting.amount}`);
  }
  assertMovementFits(posting.lots, posting.amount);
}
