import { sql } from 'kysely';
import { heldByLot, readWalletFunds } from '../ledger/held-tokens';
import { postLedgerEntry } from '../ledger/post-ledger-entry';
import { references } from '../references';
import type { UnitOfWork } from '../unit-of-work/unit-of-work';

export interface VoidLotAnswer {
  lotId: number;
  ledgerReference: string;
  /** Tokens the void took back (0 when the lot had none left). */
  taken: number;
  /** The wallet's balance right after the void. */
  balance: number;
}

export type VoidLotResult =
  | { kind: 'voided'; answer: VoidLotAnswer }
  /** Voided before: the first void's answer, nothing taken now. */
  | { kind: 'already-voided'; answer: VoidLotAnswer }
  /** No such lot for this user (another user's lot included). */
  | { kind: 'not-found' };

/**
 * Takes back what is left of one lot and not held (support's void, docs/lots.md "Grants") under
 * `lot:{lotId}:voided`, in the caller's unit of work. The wallet row is locked first (as every
 * writer of lots does), so the remainder read is the one the take-back moves; the take-back starts
 * at the lot itself (`fromLotOf` its source) and takes at most the balance, never below zero. A
 * second void finds the first entry under the reference and answers it.
 */
export async function voidLot(
  uow: UnitOfWork,
  request: { userId: string; lotId: number; reason: string },
): Promise<VoidLotResult> {
  const { trx } = uow;
  const reference = references.lotVoided(request.lotId);
  const funds = await readWalletFunds(trx, request.userId, { lock: true });
  // The lot's unheld remainder: what active holds reserve of it stays (docs/holds.md).
  const lots = await sql<{ source: string; remaining: number; held: number }>`
    WITH held AS (${heldByLot(request.userId)})
    SELECT l.source, l.remaining, coalesce(h.held, 0)::bigint AS held
      FROM credit_lots l LEFT JOIN held h ON h.lot_id = l.id
     WHERE l.id = ${request.lotId} AND l.user_id = ${request.userId}`.execute(trx);
  const lot = lots.rows[0];
  const balance = funds.balance;
  if (!lot) return { kind: 'not-found' };
  const previous = await trx
    .selectFrom('ledger_entries')
    .select(['amount', 'balance_after'])
    .where('reference', '=', reference)
    .executeTakeFirst();
  if (previous) {
    return {
      kind: 'already-voided',
      answer: {
        lotId: request.lotId,
        ledgerReference: reference,
        taken: -previous.amount,
        balance: previous.balance_after,
      },
    };
  }
  const take = Math.min(Number(lot.remaining) - Number(lot.held), funds.available);
  if (take <= 0) {
    return { kind: 'voided', answer: { lotId: request.lotId, ledgerReference: reference, taken: 0, balance } };
  }
  const posted = await postLedgerEntry(uow, {
    userId: request.userId,
    reference,
    amount: -take,
    reason: request.reason,
    lots: { kind: 'take-back', fromLotOf: lot.source },
  });
  return {
    kind: 'voided',
    answer: {
      lotId: request.lotId,
      ledgerReference: reference,
      taken: -posted.entry.amount,
      balance: posted.entry.balance_after,
    },
  };
}
