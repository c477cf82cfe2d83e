import type { DB } from '@tally/billing-core';
import type { Kysely } from 'kysely';

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
