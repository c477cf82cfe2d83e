import type { DB } from '@tally/billing-core';
import { type Kysely, sql } from 'kysely';

type LedgerColumn = keyof DB['ledger_entries'] & string;

/** What a whole-state assertion compares of each entry by default. */
export const ledgerColumns = ['reference', 'amount', 'balance_before', 'balance_after', 'reason'] as const;

/** One user's ledger entries in the order they were posted (`columns`: the default, or others). */
export function ledgerOf<Column extends LedgerColumn = (typeof ledgerColumns)[number]>(
  db: Kysely<DB>,
  userId: string,
  columns: readonly Column[] = ledgerColumns as readonly LedgerColumn[] as readonly Column[],
) {
  return db.selectFrom('ledger_entries').select(columns).where('user_id', '=', userId).orderBy('id').execute();
}

type LotColumn = keyof DB['credit_lots'] & string;

/** What the lot assertions compare by default. */
export const lotColumns = ['id', 'category', 'source', 'amount', 'remaining', 'expires_at'] as const;

/** One user's credit lots in the order they were made (`columns`: the default, or others). */
export function lotsOf<Column extends LotColumn = (typeof lotColumns)[number]>(
  db: Kysely<DB>,
  userId: string,
  columns: readonly Column[] = lotColumns as readonly LotColumn[] as readonly Column[],
) {
  return db.selectFrom('credit_lots').select(columns).where('user_id', '=', userId).orderBy('id').execute();
}

/** One user's draws (which lot each entry took from or gave back to), in posting order, then by lot. */
export async function drawsOf(db: Kysely<DB>, userId: string) {
  const result = await sql<{ reference: string; lot_id: number; amount: number }>`
    SELECT e.reference, d.lot_id, d.amount FROM ledger_draws d JOIN ledger_entries e ON e.id = d.ledger_entry_id
     WHERE e.user_id = ${userId} ORDER BY d.ledger_entry_id, d.lot_id`.execute(db);
  return result.rows;
}

/** A never-expiring purchased lot with nothing held, as the wallet answers it (GET /v1/users/{userId}/wallet). */
export const purchasedLot = (source: string, amount: number, remaining = amount) => ({
  id: expect.any(Number),
  category: 'purchased',
  source,
  amount,
  remaining,
  held: 0,
  expiresAt: null,
  createdAt: expect.any(String),
});
