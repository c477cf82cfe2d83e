import { sql, type Transaction } from 'kysely';
import type { DB } from '../db/schema';
import { toCamelCased } from '../db/to-camel-cased';
import type { SupportLedger, SupportSubject } from './user-support-view';

/**
 * The canonical user's ledger entries, newest first, at most `limit` (below `beforeId` when given:
 * keyset paging); `sum` and `total` cover every entry. `walletBalance` is the wallet section's balance, read in the same snapshot, so
 * `matchesBalance` compares numbers of one moment.
 */
export async function readLedgerSection(
  trx: Transaction<DB>,
  { userId }: SupportSubject,
  { limit, beforeId, walletBalance }: { limit: number; beforeId?: number | undefined; walletBalance: number },
): Promise<SupportLedger> {
  const totals = await trx
    .selectFrom('ledger_entries')
    .select([sql<string>`count(*)`.as('count'), sql<string>`coalesce(sum(amount), 0)`.as('sum')])
    .where('user_id', '=', userId)
    .executeTakeFirstOrThrow();
  let page = trx
    .selectFrom('ledger_entries')
    .select(['id', 'reference', 'amount', 'balance_before', 'balance_after', 'reason', 'inbox_event_id', 'created_at'])
    .where('user_id', '=', userId);
  // guard: support-ledger-cursor
  if (beforeId !== undefined) page = page.where('id', '<', beforeId);
  const rows = await page.orderBy('id', 'desc').limit(limit).execute();
  const total = Number(totals.count);
  const sum = Number(totals.sum);
  return {
    entries: rows.map(toCamelCased),
    total,
    truncated: total > rows.length,
    sum,
    matchesBalance: sum === walletBalance,
  };
}
