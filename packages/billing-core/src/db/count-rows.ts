import { type SelectQueryBuilder, sql } from 'kysely';
import type { DB } from './schema';

/** How many rows `query` (a from and its conditions, no select list) selects. */
export async function countRows<TB extends keyof DB>(query: SelectQueryBuilder<DB, TB, object>): Promise<number> {
  const { count } = await query.select(sql<string>`count(*)`.as('count')).executeTakeFirstOrThrow();
  return Number(count);
}
