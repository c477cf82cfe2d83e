import { sql } from 'kysely';
import { createEmptyTestDatabase, useDatabase } from '../testing/test-database';
import { sqlAnyOf, sqlBatchArray } from './sql-batch-array';

/**
 * sqlBatchArray: the same values as the plain array parameter, and a named prepared statement
 * reading a batch through it settles on a generic plan (pg_prepared_statements counts its plans),
 * where the plain parameter keeps a custom plan per execution.
 */
describe('sqlBatchArray', () => {
  const database = useDatabase(createEmptyTestDatabase);

  it('unnests to the same rows, in order, NULLs included', async () => {
    const { rows } = await sql<{ value: string | null; position: number }>`
      SELECT value, position::int FROM unnest(${sqlBatchArray(['b', null, 'a'], 'text')}) WITH ORDINALITY AS r (value, position)`.execute(
      database.db,
    );
    expect(rows).toEqual([
      { value: 'b', position: 1 },
      { value: null, position: 2 },
      { value: 'a', position: 3 },
    ]);
  });

  it('lets a prepared statement over a batch settle on its generic plan, which the plain array parameter never does', async () => {
    const plans = (array: string) =>
      database.db.connection().execute(async (connection) => {
        await sql`CREATE TEMP TABLE IF NOT EXISTS batch_rows (id text PRIMARY KEY, n int)`.execute(connection);
        await sql`INSERT INTO batch_rows SELECT g::text, g FROM generate_series(1, 200) g ON CONFLICT DO NOTHING`.execute(
          connection,
        );
        await sql`ANALYZE batch_rows`.execute(connection);
        await sql`DEALLOCATE ALL`.execute(connection);
        // Per row of the batch a correlated look-up, as the hold and spend batches read.
        await sql
          .raw(`PREPARE batch_read (text[]) AS
                  SELECT r.id, (SELECT b.n FROM batch_rows b WHERE b.id = r.id) AS n
                    FROM unnest(${array}) WITH ORDINALITY AS r (id, position)`)
          .execute(connection);
        for (let run = 0; run < 10; run += 1) {
          const ids = Array.from({ length: 2 + (run % 3) }, (_, i) => String(run * 7 + i + 1));
          await sql.raw(`EXECUTE batch_read ('{${ids.join(',')}}')`).execute(connection);
        }
        const counted = await sql<{ generic: number; custom: number }>`
          SELECT generic_plans::int AS generic, custom_plans::int AS custom
            FROM pg_prepared_statements WHERE name = 'batch_read'`.execute(connection);
        await sql`DEALLOCATE batch_read`.execute(connection);
        return counted.rows[0];
      });
    // What sqlBatchArray writes (its one parameter is $1, the prepared statement's).
    const hidden = sqlBatchArray([], 'text').compile(database.db).sql;
    expect(hidden).toBe('(SELECT $1::text[])');
    expect(await plans(hidden)).toEqual({ generic: 5, custom: 5 });
    expect(await plans('$1::text[]')).toEqual({ generic: 0, custom: 10 });
  });

  it('sqlAnyOf: the keys a plain ANY finds, and a prepared look-up keeps a generic plan that probes the index, on an empty table too', async () => {
    const plans = (anyOf: string) =>
      database.db.connection().execute(async (connection) => {
        await sql`CREATE TEMP TABLE IF NOT EXISTS keyed_rows (id text PRIMARY KEY, n int)`.execute(connection);
        await sql`TRUNCATE keyed_rows`.execute(connection);
        await sql`DEALLOCATE ALL`.execute(connection);
        await sql
          .raw(`PREPARE keyed_read (text[]) AS SELECT id, n FROM keyed_rows WHERE id = ${anyOf} ORDER BY id`)
          .execute(connection);
        for (let run = 0; run < 10; run += 1) await sql.raw(`EXECUTE keyed_read ('{a,b}')`).execute(connection);
        const counted = await sql<{ generic: number; custom: number }>`
          SELECT generic_plans::int AS generic, custom_plans::int AS custom
            FROM pg_prepared_statements WHERE name = 'keyed_read'`.execute(connection);
        const plan = await sql<{ 'QUERY PLAN': string }>`EXPLAIN EXECUTE keyed_read ('{a,b}')`.execute(connection);
        await sql`DEALLOCATE keyed_read`.execute(connection);
        return { ...counted.rows[0], plan: plan.rows.map((row) => row['QUERY PLAN']).join('\n') };
      });
    const found = await sql<{ id: string }>`
      SELECT id FROM (VALUES ('a'), ('b'), ('c')) AS t (id) WHERE id = ${sqlAnyOf(['c', 'a', 'x'], 'text')} ORDER BY id`.execute(
      database.db,
    );
    expect(found.rows.map((row) => row.id)).toEqual(['a', 'c']);
    const hidden = sqlAnyOf([], 'text').compile(database.db).sql;
    expect(hidden).toBe('ANY ((SELECT $1::text[])::text[])');
    const kept = await plans(hidden);
    expect(kept).toMatchObject({ generic: 5, custom: 5 });
    expect(kept.plan).toMatch(/Index Cond: \(id = ANY \(\$\d+\)\)/);
    expect(await plans('ANY ($1::text[])')).toMatchObject({ generic: 0, custom: 10 });
  });
});
