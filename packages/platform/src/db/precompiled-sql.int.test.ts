import { sql } from 'kysely';
import { createEmptyTestDatabase, useDatabase } from '../testing/test-database';
import { createDb } from './create-db';
import { precompiledSql } from './precompiled-sql';

describe('precompiledSql', () => {
  const database = useDatabase(createEmptyTestDatabase);

  it('runs the text Kysely compiles for the template, with the values in their slots (a slot used twice fills two parameters)', async () => {
    const template = (s: { a: number; b: string }) =>
      sql`SELECT ${s.a}::int AS a, ${s.b}::text AS b, ${s.a}::int + 1 AS a_plus_one, ${sql`${s.b}::text || '!'`} AS shout`;
    const statement = precompiledSql<{ a: number; b: string }>(template);
    const compiled = template({ a: 7, b: 'x' }).compile(database.db);
    const { rows } = await statement(database.db, { a: 7, b: 'x' });
    expect(rows).toEqual([{ a: 7, b: 'x', a_plus_one: 8, shout: 'x!' }]);
    expect((await statement(database.db, { a: 1, b: 'y' })).rows).toEqual([
      { a: 1, b: 'y', a_plus_one: 2, shout: 'y!' },
    ]);
    expect(compiled.parameters).toEqual([7, 'x', 7, 'x']);

    const positional = precompiledSql<readonly string[]>(
      (s) => sql`SELECT x FROM (VALUES ('p'), ('q'), ('r')) AS v(x) WHERE x IN (${sql.join([s[0], s[1]])}) ORDER BY x`,
    );
    expect((await positional(database.db, ['r', 'p'])).rows).toEqual([{ x: 'p' }, { x: 'r' }]);
  });

  it('refuses a template that interpolates a value instead of a slot, and a transaction that has ended', async () => {
    const fixed = precompiledSql<{ a: number }>((s) => sql`SELECT ${s.a}::int AS a, ${5}::int AS b`);
    await expect(fixed(database.db, { a: 1 })).rejects.toThrow(/parameter \$2 .* is not a slot/);

    const statement = precompiledSql<{ a: number }>((s) => sql`SELECT ${s.a}::int AS a`);
    const { db, close } = createDb({ connectionString: database.url, maxConnections: 1 });
    try {
      const trx = await db.startTransaction().execute();
      expect((await statement(trx, { a: 3 })).rows).toEqual([{ a: 3 }]);
      await trx.commit().execute();
      await expect(statement(trx, { a: 4 })).rejects.toThrow('Transaction is already committed');
    } finally {
      await close();
    }
  });
});
