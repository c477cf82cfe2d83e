import { sql } from 'kysely';
import { references } from '../references';
import type { UnitOfWork } from '../unit-of-work/unit-of-work';
import { heldByLot } from './held-tokens';
import { closeLotGap } from './lots';
import { postLedgerEntry } from './post-ledger-entry';

/** Where tokens came back to lots: the lots a hold reserved, or the lots a give-back entry returned to. */
export type FreedLots = { holdId: string } | { entryId: number } | { lotIds: readonly number[] };

/**
 * A void is a standing state of its lot (docs/lots.md "Voids"): whatever of a voided lot no active
 * hold reserves is taken at once, one entry per lot, `lot:{lotId}:voided` for its first take and
 * `lot:{lotId}:voided:{n}` after (a hold on it released or lapsed, a give-back that returned to
 * it, a second void). Looks only at the lots `freed` names, so the common case (no voided lot
 * there) costs one read. The caller holds the wallet lock and has already ended the hold or
 * posted the give-back. A voided lot's unheld part is at most the wallet's available (every lot
 * holds at least what holds reserve of it), so the take never goes below zero. Returns the tokens
 * taken and the reference of the last take.
 */
export async function takeFreedVoidedTokens(
  uow: UnitOfWork,
  userId: string,
  freed: FreedLots,
): Promise<{ taken: number; reference: string | null }> {
  const { trx } = uow;
  const lotIds =
    'holdId' in freed
      ? sql`SELECT lot_id FROM hold_lots WHERE hold_id = ${freed.holdId}`
      : 'entryId' in freed
        ? sql`SELECT lot_id FROM ledger_draws WHERE ledger_entry_id = ${freed.entryId}`
        : sql`SELECT unnest(${[...freed.lotIds]}::bigint[])`;
  const readVoided = () =>
    sql<{ id: number; unheld: number; void_takes: number }>`
      WITH held AS (${heldByLot(userId)})
      SELECT l.id, l.remaining - coalesce(h.held, 0) AS unheld, l.void_takes
        FROM credit_lots l LEFT JOIN held h ON h.lot_id = l.id
       WHERE l.id IN (${lotIds}) AND l.user_id = ${userId}
         AND l.voided_at IS NOT NULL AND l.remaining > coalesce(h.held, 0)
       ORDER BY l.id`.execute(trx);
  let voided = await readVoided();
  if (voided.rows.length === 0) return { taken: 0, reference: null };
  // Rare (a voided lot got tokens back): close a gap old code may have left between the balance
  // and the lots first, so `remaining` is what the wallet really holds there.
  const wallet = await sql<{ balance: number }>`SELECT balance FROM wallets WHERE user_id = ${userId}`.execute(trx);
  // guard: void-lot-available
  await closeLotGap(trx, userId, Number(wallet.rows[0]?.balance ?? 0));
  voided = await readVoided();
  let taken = 0;
  let reference: string | null = null;
  for (const lot of voided.rows) {
    const n = Number(lot.void_takes) + 1;
    reference = references.lotVoided(lot.id, n);
    await postLedgerEntry(uow, {
      userId,
      reference,
      amount: -Number(lot.unheld),
      reason: 'lot_voided',
      lots: { kind: 'void', lotId: Number(lot.id) },
    });
    await sql`UPDATE credit_lots SET void_takes = ${n} WHERE id = ${lot.id}`.execute(trx);
    taken += Number(lot.unheld);
  }
  return { taken, reference };
}
