import { sql, type Transaction } from 'kysely';
import type { DB } from '../db/schema';

/**
 * Heap rows this transaction has read from `table` so far: through its indexes (counted on each
 * index), by bitmap scans (on the table) and by sequential scans (returned, on the table). What
 * a statement read is the difference around it: a probe by key reads its rows, a scan the table.
 */
export async function rowsReadFrom(trx: Transaction<DB>, table: keyof DB & string): Promise<number> {
  const { rows } = await sql<{ read: string }>`
    SELECT (pg_stat_get_xact_tuples_fetched(${table}::regclass)
            + pg_stat_get_xact_tuples_returned(${table}::regclass)
            + coalesce((SELECT sum(pg_stat_get_xact_tuples_fetched(indexrelid)) FROM pg_index
                         WHERE indrelid = ${table}::regclass), 0))::text AS read`.execute(trx);
  return Number(rows[0]?.read);
}
