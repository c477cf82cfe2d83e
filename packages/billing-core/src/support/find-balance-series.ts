import { type Kysely, sql } from 'kysely';
import type { DB } from '../db/schema';

/** One point of a balance plot: the balance after the last entry of a slice of the ledger. */
export interface BalancePoint {
  at: Date;
  balance: number;
  /** The lowest and highest balance within the slice (a slice of many entries hides its swings otherwise). */
  min: number;
  max: number;
}

/**
 * The balance of a user over time from its ledger: where the first entry found the wallet, then at
 * most `points` points, the entries in id order cut into that many equal slices, each giving its
 * last balance and its range. One scan of the user's entries (`ledger_entries_user_idx`), so
 * 10,000 entries still make 201 points; no entries, no points.
 */
export async function findBalanceSeries(
  db: Kysely<DB>,
  userId: string,
  options: { points?: number } = {},
): Promise<BalancePoint[]> {
  const points = Math.max(2, Math.min(options.points ?? 200, 1_000));
  const result = await sql<{ at: Date; balance: string; min: string; max: string }>`
    SELECT max(created_at) AS at,
           (array_agg(balance_after ORDER BY id DESC))[1] AS balance,
           min(balance_after) AS min, max(balance_after) AS max
      FROM (SELECT id, created_at, balance_after, ntile(${points}) OVER (ORDER BY id) AS slice
              FROM ledger_entries WHERE user_id = ${userId}) AS entries
     GROUP BY slice
     ORDER BY slice`.execute(db);
  const first = await db
    .selectFrom('ledger_entries')
    .select(['balance_before', 'created_at'])
    .where('user_id', '=', userId)
    .orderBy('id')
    .limit(1)
    .executeTakeFirst();
  if (!first) return [];
  // The plot starts where the first entry found the wallet (0 for a new user).
  const start = {
    at: first.created_at,
    balance: first.balance_before,
    min: first.balance_before,
    max: first.balance_before,
  };
  return [
    start,
    ...result.rows.map((row) => ({
      at: row.at,
      balance: Number(row.balance),
      min: Number(row.min),
      max: Number(row.max),
    })),
  ];
}
