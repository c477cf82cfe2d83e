import { sql } from 'kysely';
import { createEmptyTestDatabase, useDatabase } from '../testing/test-database';
import { createDb } from './create-db';
import { isDatabaseUnavailableError } from './database-errors';
import { PREPARE_AFTER } from './prepared-statements';

describe('createDb', () => {
  const database = useDatabase(createEmptyTestDatabase);

  it('survives the server ending a connection in the middle of a transaction: the transaction fails as unavailable, the next query runs', async () => {
    const lost: Error[] = [];
    const { db, close } = createDb({
      connectionString: database.url,
      applicationName: 'tally-create-db-test',
      onConnectionError: (error) => lost.push(error),
    });
    try {
      // An idle pooled connection too, so both kinds are lost at once.
      await sql`SELECT 1`.execute(db);
      const transaction = db.transaction().execute(async (trx) => {
        const { rows } = await sql<{ pid: number }>`SELECT pg_backend_pid() AS pid`.execute(trx);
        // What a restart or a failover does to every backend, done to this one only.
        await sql`SELECT pg_terminate_backend(pid) FROM pg_stat_activity
                   WHERE application_name = 'tally-create-db-test'`.execute(database.db);
        await new Promise((resolve) => setTimeout(resolve, 200));
        return rows[0]?.pid;
      });
      const error = await transaction.then(
        () => undefined,
        (failure: unknown) => failure,
      );
      expect(isDatabaseUnavailableError(error)).toBe(true);
      expect(lost.length).toBeGreaterThanOrEqual(1);

      const { rows } = await sql<{ one: number }>`SELECT 1 AS one`.execute(db);
      expect(rows).toEqual([{ one: 1 }]);
    } finally {
      await close();
    }
  });

  it('keeps minConnections open through idle spells and closes the idle ones above it', async () => {
    const count = async (name: string) => {
      const { rows } = await sql<{ n: number }>`SELECT count(*)::int AS n FROM pg_stat_activity
                                                  WHERE application_name = ${name}`.execute(database.db);
      return rows[0]?.n ?? 0;
    };
    const warm = createDb({
      connectionString: database.url,
      applicationName: 'tally-create-db-min',
      minConnections: 3,
      idleTimeoutMs: 1_000,
    });
    const cold = createDb({
      connectionString: database.url,
      applicationName: 'tally-create-db-nomin',
      idleTimeoutMs: 1_000,
    });
    try {
      // Five connections at once in each pool, then an idle spell well past the idle timeout.
      const burst = (db: typeof warm.db) =>
        Promise.all(Array.from({ length: 5 }, () => sql`SELECT pg_sleep(0.05)`.execute(db)));
      await Promise.all([burst(warm.db), burst(cold.db)]);
      expect(await count('tally-create-db-min')).toBe(5);
      // (The idle timeout is a second so a loaded machine cannot close a burst connection before
      // the count above; at 100 ms it did once in a full run at load 20.)
      await new Promise((resolve) => setTimeout(resolve, 3_000));
      expect(await count('tally-create-db-min')).toBe(3);
      expect(await count('tally-create-db-nomin')).toBe(0);
    } finally {
      await warm.close();
      await cold.close();
    }
  });

  describe('prepared statements', () => {
    /** The named statements of the one connection of a single-connection pool. */
    const preparedOn = async (db: typeof database.db) =>
      (
        await sql<{ statement: string }>`SELECT statement FROM pg_prepared_statements ORDER BY prepare_time`.execute(db)
      ).rows.map((row) => row.statement);
    const runTimes = async (times: number, run: () => Promise<unknown>) => {
      for (let i = 0; i < times; i += 1) await run();
    };

    it('names a statement with parameters once the pool has run it PREPARE_AFTER times, and none when off', async () => {
      const on = createDb({ connectionString: database.url, maxConnections: 1, preparedStatements: true });
      const off = createDb({ connectionString: database.url, maxConnections: 1 });
      try {
        const hot = (db: typeof on.db) => sql<{ n: number }>`SELECT ${41}::int + 1 AS n`.execute(db);
        await runTimes(PREPARE_AFTER - 1, () => hot(on.db));
        expect(await preparedOn(on.db)).toEqual([]);
        const { rows } = await hot(on.db);
        expect(rows).toEqual([{ n: 42 }]);
        expect(await preparedOn(on.db)).toEqual(['SELECT $1::int + 1 AS n']);
        // Statements without parameters (BEGIN, COMMIT, the queries above) stay unnamed.
        await runTimes(PREPARE_AFTER + 1, () => sql`SELECT 1`.execute(on.db));
        expect(await preparedOn(on.db)).toHaveLength(1);

        await runTimes(PREPARE_AFTER * 3, () => hot(off.db));
        expect(await preparedOn(off.db)).toEqual([]);
        expect(on.preparedStatements()).toBe(true);
        expect(off.preparedStatements()).toBe(false);
      } finally {
        await on.close();
        await off.close();
      }
    });

    it('a named statement returns the rows an unnamed one does, also after its columns change', async () => {
      const on = createDb({ connectionString: database.url, maxConnections: 1, preparedStatements: true });
      const off = createDb({ connectionString: database.url, maxConnections: 1 });
      try {
        const wide = (db: typeof on.db, id: number, label: string | null) =>
          sql<Record<string, unknown>>`
            SELECT ${id}::bigint AS id, ${label}::text AS label, '2026-12-01 10:00:00.123+00'::timestamptz AS at,
                   NULL::timestamptz AS never, '2026-12-01'::date AS day, 12::numeric(6, 0) AS tokens,
                   true AS flag, '{"a":1}'::jsonb AS data, ARRAY[1, 2]::bigint[] AS ids, ${id} * 2 AS twice`.execute(
            db,
          );
        for (const [id, label] of [
          [1, 'one'],
          [2, null],
          [3, 'three'],
          [4, 'four'],
          [5, null],
        ] as const) {
          const named = await wide(on.db, id, label);
          const unnamed = await wide(off.db, id, label);
          expect(named.rows).toEqual(unnamed.rows);
          expect(named.rows[0]).toEqual({
            id,
            label,
            at: new Date('2026-12-01T10:00:00.123Z'),
            never: null,
            day: '2026-12-01',
            tokens: 12,
            flag: true,
            data: { a: 1 },
            ids: ['1', '2'],
            twice: id * 2,
          });
        }
        expect(await preparedOn(on.db)).toHaveLength(1);
        // Each row is its own object.
        const two = await sql<{ n: number }>`SELECT n FROM generate_series(1, ${2}::int) AS n`.execute(on.db);
        const again = await sql<{ n: number }>`SELECT n FROM generate_series(1, ${2}::int) AS n`.execute(on.db);
        const third = await sql<{ n: number }>`SELECT n FROM generate_series(1, ${2}::int) AS n`.execute(on.db);
        expect([two.rows, again.rows, third.rows]).toEqual([
          [{ n: 1 }, { n: 2 }],
          [{ n: 1 }, { n: 2 }],
          [{ n: 1 }, { n: 2 }],
        ]);
        expect(third.rows[0]).not.toBe(third.rows[1]);

        // A name is the text's hash, the same in every pool: a fresh pool preparing the text after
        // a migration gets the new columns under the name another pool prepared the old ones.
        const table = `shaped_${Date.now().toString(36)}`;
        await sql`CREATE TABLE ${sql.table(table)} (a int)`.execute(database.db);
        await sql`INSERT INTO ${sql.table(table)} VALUES (1)`.execute(database.db);
        const read = (db: typeof on.db) =>
          sql<Record<string, unknown>>`SELECT * FROM ${sql.table(table)} WHERE a = ${1}`.execute(db);
        await runTimes(PREPARE_AFTER, () => read(on.db));
        expect((await read(on.db)).rows).toEqual([{ a: 1 }]);
        await sql`ALTER TABLE ${sql.table(table)} ADD COLUMN b text DEFAULT 'new'`.execute(database.db);
        const fresh = createDb({ connectionString: database.url, maxConnections: 1, preparedStatements: true });
        try {
          await runTimes(PREPARE_AFTER - 1, () => read(fresh.db));
          expect((await read(fresh.db)).rows).toEqual([{ a: 1, b: 'new' }]);
          expect(await preparedOn(fresh.db)).toHaveLength(1);
        } finally {
          await fresh.close();
          await sql`DROP TABLE ${sql.table(table)}`.execute(database.db);
        }
      } finally {
        await on.close();
        await off.close();
      }
    });

    it("keeps working when a migration changes a prepared statement's row type: retried at once outside a transaction, failing its transaction once inside one", async () => {
      const table = `prepared_${Date.now().toString(36)}`;
      await sql`CREATE TABLE ${sql.table(table)} (a int)`.execute(database.db);
      await sql`INSERT INTO ${sql.table(table)} VALUES (1)`.execute(database.db);
      const pooled = createDb({ connectionString: database.url, maxConnections: 1, preparedStatements: true });
      try {
        const read = (db: typeof pooled.db) =>
          sql<Record<string, unknown>>`SELECT * FROM ${sql.table(table)} WHERE a = ${1}`.execute(db);
        await runTimes(PREPARE_AFTER, () => read(pooled.db));
        expect(await preparedOn(pooled.db)).toHaveLength(1);

        await sql`ALTER TABLE ${sql.table(table)} ADD COLUMN b int`.execute(database.db);
        expect((await read(pooled.db)).rows).toEqual([{ a: 1, b: null }]);

        await sql`ALTER TABLE ${sql.table(table)} ADD COLUMN c int`.execute(database.db);
        const inTransaction = () => pooled.db.transaction().execute((trx) => read(trx));
        await expect(inTransaction()).rejects.toThrow('cached plan must not change result type');
        expect((await inTransaction()).rows).toEqual([{ a: 1, b: null, c: null }]);
        expect(pooled.preparedStatements()).toBe(true);
      } finally {
        await pooled.close();
        await sql`DROP TABLE ${sql.table(table)}`.execute(database.db);
      }
    });
  });
});
