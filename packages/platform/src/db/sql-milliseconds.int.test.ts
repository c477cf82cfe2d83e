import { sql } from 'kysely';
import { createEmptyTestDatabase, useDatabase } from '../testing/test-database';
import { sqlMilliseconds } from './sql-milliseconds';

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
});
