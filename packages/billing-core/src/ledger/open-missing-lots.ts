import { commitWith, runInTransaction } from '@tally/platform/db';
import { type Kysely, sql } from 'kysely';
import type { DB } from '../db/schema';
import { openingLotSource } from './lots';

/**
 * The batched backfill of opening lots (docs/lots.md): for up to `batchSize` wallets whose balance
 * is not the sum of their lots (a balance from before lots, or an entry old code posted without
 * lots), one short transaction locks those wallets (FOR UPDATE, in user id order, skipping any a
 * posting holds: it closes its own gap) and moves each lot sum to the balance, as a posting does
 * lazily: a positive gap into the never-expiring `purchased` lot `lot:opening:{userId}`. A wallet
 * whose lots hold more than its balance (an old-code debit) is left to its next posting, which takes
 * the difference in the take-back order. Returns how many wallets it opened; call until 0.
 */
export async function openMissingLots(db: Kysely<DB>, options: { batchSize: number }): Promise<number> {
  return runInTransaction(db, async (trx) => {
    // guard: backfill-opening-lots
    const gaps = await sql<{ user_id: string; gap: number }>`
      SELECT w.user_id, (w.balance - coalesce(
               (SELECT sum(remaining) FROM credit_lots l WHERE l.user_id = w.user_id), 0))::bigint AS gap
        FROM wallets w
       WHERE w.balance > coalesce((SELECT sum(remaining) FROM credit_lots l WHERE l.user_id = w.user_id), 0)
       ORDER BY w.user_id
       LIMIT ${options.batchSize}
         FOR UPDATE OF w SKIP LOCKED`.execute(trx);
    for (const row of gaps.rows) {
      // Re-read under the lock: the snapshot of the statement above may predate a posting that
      // committed while it waited.
      const fresh = await sql<{ gap: number }>`
        SELECT (w.balance - coalesce((SELECT sum(remaining) FROM credit_lots l WHERE l.user_id = w.user_id), 0))::bigint AS gap
          FROM wallets w WHERE w.user_id = ${row.user_id}`.execute(trx);
      const gap = Number(fresh.rows[0]?.gap ?? 0);
      if (gap <= 0) continue;
      await sql`
        INSERT INTO credit_lots (user_id, category, source, amount, remaining, expires_at)
        VALUES (${row.user_id}, 'purchased', ${openingLotSource(row.user_id)}, ${gap}, ${gap}, NULL)
        ON CONFLICT (source) DO UPDATE
          SET amount = credit_lots.amount + excluded.amount, remaining = credit_lots.remaining + excluded.remaining`.execute(
        trx,
      );
    }
    return commitWith(gaps.rows.length);
  });
}
