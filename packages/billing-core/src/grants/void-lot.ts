import { sql } from 'kysely';
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
 * Takes back what is left of one lot (support's void, docs/lots.md "Grants") under
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
  const wallet = await sql<{ balance: number }>`
    SELECT balance FROM wallets WHERE user_id = ${request.userId} FOR UPDATE`.execute(trx);
  const lots = await sql<{ source: string; remaining: number }>`
    SELECT source, remaining FROM credit_lots WHERE id = ${request.lotId} AND user_id = ${request.userId}`.execute(trx);
  const lot = lots.rows[0];
  const balance = Number(wallet.rows[0]?.balance ?? 0);
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
  const take = Math.min(Number(lot.remaining), balance);
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
