import { type RawBuilder, sql } from 'kysely';

/** The element types a batch's array parameter takes. */
export type SqlBatchArrayType = 'text' | 'bigint' | 'int' | 'boolean';

/**
 * A batch's values as an array parameter whose length the planner does not see (a sub-select
 * of the cast parameter), for `unnest(…)` in a statement that reads or writes per row of the batch
 * (correlated look-ups, a join by key). A custom plan of `unnest($1::text[])` knows the array's
 * length and a generic one assumes 10 rows, so they cost differently and a named prepared
 * statement (createDb's `preparedStatements`) keeps planning every execution afresh; hidden, both
 * estimate alike and Postgres settles on the generic plan after its five custom ones, so the
 * statement is planned once per connection instead of once per batch (docs/holds.md "Cost").
 * Not for a statement whose best plan depends on the batch's size. `values` may be a slot of a
 * precompiledSql template.
 */
export function sqlBatchArray(values: readonly unknown[], type: SqlBatchArrayType): RawBuilder<unknown[]> {
  // guard: batch-array-length-hidden
  return sql<unknown[]>`(SELECT ${values}::${sql.raw(type)}[])`;
}
