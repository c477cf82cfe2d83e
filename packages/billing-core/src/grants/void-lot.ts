import { sql } from 'kysely';
import { lockWalletFunds } from '../holds/lock-wallet-funds';
import { takeFreedVoidedTokens } from '../ledger/voided-lots';
import { references } from '../references';
import type { UnitOfWork } from '../unit-of-work/unit-of-work';

export interface VoidLotAnswer {
  lotId: number;
  /** The entry this void posted; the lot's first void entry (`lot:{lotId}:voided`) when it took nothing. */
  ledgerReference: string;
  /** Tokens this void took back (0 when the lot had nothing unheld left). */
  taken: number;
  /** The wallet's balance right after the void. */
  balance: number;
}

export type VoidLotResult =
  | { kind: 'voided'; answer: VoidLotAnswer }
  /** Voided before: it took what was unheld now (usually nothing: a voided lot keeps nothing unheld). */
  | { kind: 'already-voided'; answer: VoidLotAnswer }
  /** No such lot for this user (another user's lot included). */
  | { kind: 'not-found' };

/**
 * Support's void (docs/lots.md "Voids"), in the caller's unit of work: marks the lot voided, a
 * standing state, and takes what of it no active hold reserves (takeFreedVoidedTokens). From then
 * on tokens that come back to the lot (a hold on it released or lapsed, a give-back) are taken at
 * once by whoever frees them; voiding again takes whatever is unheld now. The wallet is locked
 * first (lockWalletFunds, which also settles lapsed holds), so the remainder read is the one the
 * take moves. Idempotent in effect: a void of a voided lot takes only what came back since.
 */
export async function voidLot(uow: UnitOfWork, request: { userId: string; lotId: number }): Promise<VoidLotResult> {
  const { trx } = uow;
  const funds = await lockWalletFunds(uow, request.userId);
  // guard: void-lot-owner
  const lot = await sql<{ voided: boolean }>`
    SELECT voided_at IS NOT NULL AS voided FROM credit_lots
     WHERE id = ${request.lotId} AND user_id = ${request.userId}`.execute(trx);
  const found = lot.rows[0];
  if (!found) return { kind: 'not-found' };
  // guard: void-standing-state
  if (!found.voided) {
    await sql`UPDATE credit_lots SET voided_at = now() WHERE id = ${request.lotId}`.execute(trx);
  }
  const { taken, reference } = await takeFreedVoidedTokens(uow, request.userId, { lotIds: [request.lotId] });
  return {
    // guard: void-lot-repeat
    kind: found.voided ? 'already-voided' : 'voided',
    answer: {
      lotId: request.lotId,
      ledgerReference: reference ?? references.lotVoided(request.lotId),
      taken,
      balance: funds.balance - taken,
    },
  };
}
