import { type Kysely, sql } from 'kysely';
import type { DB } from '../db/schema';

export interface LedgerDiscrepancy {
  userId: string;
  problem: 'balance_differs_from_sum' | 'broken_chain';
  detail: string;
}

export interface LedgerVerification {
  ok: boolean;
  walletsChecked: number;
  entriesChecked: number;
  discrepancies: LedgerDiscrepancy[];
}

/**
 * Checks the money invariants over the whole ledger: every wallet's cached balance equals the
 * sum of its entries, and each user's entries form an unbroken chain (each balance_before is the
 * previous balance_after, starting from 0). Read-only; reports, never repairs.
 */
export async function verifyLedger(db: Kysely<DB>, options: { limit?: number } = {}): Promise<LedgerVerification> {
  const limit = options.limit ?? 1000;
  const sums = await sql<{ user_id: string; balance: number; total: number | null; entries: number }>`
    SELECT w.user_id, w.balance, s.total, coalesce(s.entries, 0)::bigint AS entries
      FROM wallets w
      LEFT JOIN (SELECT user_id, sum(amount)::bigint AS total, count(*)::bigint AS entries
                   FROM ledger_entries GROUP BY user_id) s ON s.user_id = w.user_id
  `.execute(db);
  const chains = await sql<{ user_id: string; reference: string; balance_before: number; expected: number }>`
    SELECT user_id, reference, balance_before, expected FROM (
      SELECT user_id, reference, balance_before,
             coalesce(lag(balance_after) OVER (PARTITION BY user_id ORDER BY id), 0) AS expected
        FROM ledger_entries) chained
     WHERE balance_before <> expected
     LIMIT ${limit}
  `.execute(db);

  const discrepancies: LedgerDiscrepancy[] = [];
  let entriesChecked = 0;
  for (const row of sums.rows) {
    entriesChecked += row.entries;
    const total = row.total ?? 0;
    if (total !== row.balance && discrepancies.length < limit) {
      discrepancies.push({
        userId: row.user_id,
        problem: 'balance_differs_from_sum',
        detail: `wallet holds ${row.balance}, entries sum to ${total}`,
      });
    }
  }
  for (const row of chains.rows) {
    discrepancies.push({
      userId: row.user_id,
      problem: 'broken_chain',
      detail: `entry ${row.reference} starts at ${row.balance_before}, previous entry ended at ${row.expected}`,
    });
  }
  return { ok: discrepancies.length === 0, walletsChecked: sums.rows.length, entriesChecked, discrepancies };
}
