import { type RawBuilder, sql } from 'kysely';

/** The element types a batch's array parameter takes. */
export type SqlBatchArrayType = 'text' | 'bigint' | 'int' | 'boolean' | 'jsonb' | 'date' | 'timestamptz';

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

/**
 * `= ANY(…)` of a batch's keys, planned once per connection as sqlBatchArray is: `key =
 * ${sqlAnyOf(keys, 'text')}`. Postgres keeps planning `key = ANY($1::text[])` afresh on every
 * execution (its custom plan, knowing the array, always looks cheaper than the generic one), which
 * cost the api's id look-up and the batch's wallet lock 40 to 60 µs of planning a call; hidden,
 * the generic plan is kept and probes the key's index (`Index Cond: key = ANY ($0)`), on an empty
 * table too. For a lookup by an indexed key, not for a statement whose best plan depends on the
 * batch's size.
 */
export function sqlAnyOf(values: readonly unknown[], type: SqlBatchArrayType): RawBuilder<unknown> {
  // guard: any-of-length-hidden
  return sql`ANY (${sqlBatchArray(values, type)}::${sql.raw(type)}[])`;
}
