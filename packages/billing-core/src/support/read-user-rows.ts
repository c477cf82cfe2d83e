import { type RawBuilder, type Selectable, sql, type Transaction } from 'kysely';
import type { DB } from '../db/schema';
import { type CamelCased, toCamelCased } from '../db/to-camel-cased';
import type { SupportSubject } from './user-support-view';

/** The tables that file rows under a user id. */
type UserRowTable = { [Table in keyof DB]: 'user_id' extends keyof DB[Table] ? Table : never }[keyof DB];

/**
 * The subject's rows of one table, those filed under an alias too: `columns` of each, named in
 * camelCase (toCamelCased), in `order`. For the sections that show a table's columns as they are.
 */
export async function readUserRows<Table extends UserRowTable, Column extends keyof Selectable<DB[Table]> & string>(
  trx: Transaction<DB>,
  { userIds }: SupportSubject,
  table: Table,
  columns: readonly Column[],
  order: RawBuilder<unknown>,
): Promise<CamelCased<Pick<Selectable<DB[Table]>, Column>>[]> {
  const { rows } = await sql<Pick<Selectable<DB[Table]>, Column>>`
    SELECT ${sql.join(columns.map((column) => sql.ref(column)))} FROM ${sql.table(table)}
     WHERE user_id IN (${sql.join(userIds)})
     ORDER BY ${order}`.execute(trx);
  return rows.map(toCamelCased);
}
