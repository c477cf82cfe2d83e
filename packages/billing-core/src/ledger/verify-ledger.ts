import { type Kysely, sql } from 'kysely';
import type { DB } from '../db/schema';

export interface LedgerDiscrepancy {
  userId: string;
  problem:
    | 'balance_differs_from_sum'
    | 'broken_chain'
    | 'lot_remaining_out_of_bounds'
    | 'lots_differ_from_balance'
    | 'draws_differ_from_amount'
    | 'debt_differs_from_sources'
    | 'debt_settlements_differ_from_entries';
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
 * previous balance_after, starting from 0). And the lots' (docs/lots.md): every lot's remaining
 * lies within 0 and its amount, every wallet's balance equals the sum of its lots' remaining (a
 * wallet whose balance from before lots has no opening lot yet, or that old code touched after the
 * migration, shows here until its next posting), and every debit with draws drew exactly its
 * amount. And debt's (docs/debt.md): every wallet's debt equals what its sources still owe
 * (shortfall − recovered − forgiven of the rows not closed), and what the sources say was settled
 * equals the ledger's settling entries (`take_back_recovered`, `debt_settled`): every unit of debt is
 * explained by what made it, what settled it (in the ledger) and what support forgave. Read-only;
 * reports, never repairs.
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

  // guard: verify-wallet-lots
  const lots = await sql<{ user_id: string; balance: number; remaining: number }>`
    SELECT w.user_id, w.balance, coalesce(l.remaining, 0)::bigint AS remaining
      FROM wallets w
      LEFT JOIN (SELECT user_id, sum(remaining)::bigint AS remaining FROM credit_lots GROUP BY user_id) l
        ON l.user_id = w.user_id
     WHERE w.balance <> coalesce(l.remaining, 0)
     LIMIT ${limit}
  `.execute(db);
  const bounds = await sql<{ user_id: string; id: number; amount: number; remaining: number }>`
    SELECT user_id, id, amount, remaining FROM credit_lots
     WHERE remaining < 0 OR remaining > amount
     LIMIT ${limit}
  `.execute(db);
  // guard: verify-debit-draws
  const draws = await sql<{ user_id: string; reference: string; amount: number; drawn: number }>`
    SELECT e.user_id, e.reference, e.amount, d.drawn
      FROM (SELECT ledger_entry_id, sum(amount)::bigint AS drawn FROM ledger_draws GROUP BY ledger_entry_id) d
      JOIN ledger_entries e ON e.id = d.ledger_entry_id
     WHERE e.amount < 0 AND d.drawn <> -e.amount
     LIMIT ${limit}
  `.execute(db);

  // guard: verify-debt-sources
  const debts = await sql<{ user_id: string; debt: number; open: number; settled: number; entries: number }>`
    SELECT w.user_id, w.debt, coalesce(s.open, 0)::bigint AS open, coalesce(s.settled, 0)::bigint AS settled,
           coalesce(e.settled, 0)::bigint AS entries
      FROM wallets w
      LEFT JOIN (SELECT user_id,
                        sum(CASE WHEN closed_at IS NULL THEN shortfall - recovered - forgiven ELSE 0 END) AS open,
                        sum(recovered) AS settled
                   FROM take_back_shortfalls GROUP BY user_id) s ON s.user_id = w.user_id
      LEFT JOIN (SELECT user_id, -sum(amount) AS settled FROM ledger_entries
                  WHERE reason IN ('take_back_recovered', 'debt_settled') GROUP BY user_id) e ON e.user_id = w.user_id
     WHERE w.debt <> coalesce(s.open, 0) OR coalesce(s.settled, 0) <> coalesce(e.settled, 0)
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
  for (const row of bounds.rows) {
    discrepancies.push({
      userId: row.user_id,
      problem: 'lot_remaining_out_of_bounds',
      detail: `lot ${row.id} has ${row.remaining} of ${row.amount} tokens left`,
    });
  }
  for (const row of lots.rows) {
    discrepancies.push({
      userId: row.user_id,
      problem: 'lots_differ_from_balance',
      detail: `wallet holds ${row.balance}, its lots hold ${row.remaining}`,
    });
  }
  for (const row of draws.rows) {
    discrepancies.push({
      userId: row.user_id,
      problem: 'draws_differ_from_amount',
      detail: `debit ${row.reference} of ${-row.amount} drew ${row.drawn} from lots`,
    });
  }
  for (const row of debts.rows) {
    if (Number(row.debt) !== Number(row.open)) {
      discrepancies.push({
        userId: row.user_id,
        problem: 'debt_differs_from_sources',
        detail: `wallet owes ${row.debt}, its sources still owe ${row.open}`,
      });
    }
    if (Number(row.settled) !== Number(row.entries)) {
      discrepancies.push({
        userId: row.user_id,
        problem: 'debt_settlements_differ_from_entries',
        detail: `its sources were settled by ${row.settled}, the ledger's settling entries take ${row.entries}`,
      });
    }
  }
  return { ok: discrepancies.length === 0, walletsChecked: sums.rows.length, entriesChecked, discrepancies };
}
