import { sql } from 'kysely';
import { createEmptyTestDatabase, useDatabase } from '../testing/test-database';
import { sqlMilliseconds, sqlMillisecondsOf } from './sql-milliseconds';

describe('sqlMilliseconds', () => {
  const database = useDatabase(createEmptyTestDatabase);

  it('is exactly that many milliseconds, fractions of a second and durations past int4 milliseconds included', async () => {
    const { rows } = await sql<{ ms: number; exact: boolean }>`
      SELECT (extract(epoch FROM d.value) * 1000)::float8 AS ms, d.value = d.expected AS exact
        FROM (VALUES (1, ${sqlMilliseconds(1)}, interval '1 millisecond'),
                     (2, ${sqlMilliseconds(1_500)}, interval '1.5 seconds'),
                     (3, ${sqlMilliseconds(123)}, interval '123 milliseconds'),
                     (4, ${sqlMilliseconds(30 * 24 * 3600_000)}, interval '720 hours')) AS d(ord, value, expected)
       ORDER BY d.ord`.execute(database.db);
    expect(rows).toEqual([
      { ms: 1, exact: true },
      { ms: 1_500, exact: true },
      { ms: 123, exact: true },
      { ms: 30 * 24 * 3600_000, exact: true },
    ]);
  });

  it('sqlMillisecondsOf: the same interval from a column of milliseconds', async () => {
    const { rows } = await sql<{ exact: boolean }>`
      SELECT ${sqlMillisecondsOf(sql.ref('d.ms'))} = ${sqlMilliseconds(1_500)} AND
             ${sqlMillisecondsOf(sql`${123}::bigint`)} = interval '123 milliseconds' AND
             ${sqlMillisecondsOf(sql`${30 * 24 * 3600_000}::bigint`)} = interval '720 hours' AS exact
        FROM (VALUES (1500::bigint)) AS d (ms)`.execute(database.db);
    expect(rows).toEqual([{ exact: true }]);
  });
});
