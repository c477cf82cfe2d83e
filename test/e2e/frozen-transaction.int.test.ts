import { createDb, USER_LOCK_NAMESPACE } from '@tally/billing-core';
import { createTestDatabase, type TestDatabase } from '@tally/billing-core/testing';
import { sql } from 'kysely';

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * A process frozen inside a transaction (SIGSTOP, a paused VM) keeps its session, and with it the
 * user's advisory lock. createDb's idle-in-transaction timeout makes Postgres end that session, so
 * the lock is freed for the worker that took the job over (see docs/reliability.md).
 */
describe('a transaction left idle by a frozen process', () => {
  let database: TestDatabase;
  beforeAll(async () => {
    database = await createTestDatabase();
  });
  afterAll(() => database.drop());

  it('is ended by Postgres after the idle-in-transaction timeout, releasing the user lock it held', async () => {
    const frozen = createDb({ connectionString: database.url, maxConnections: 1, idleInTransactionTimeoutMs: 300 });
    const other = createDb({ connectionString: database.url, maxConnections: 1 });
    try {
      const client = await frozen.pool.connect();
      await client.query('BEGIN');
      await client.query('SELECT pg_advisory_xact_lock($1, hashtext($2))', [USER_LOCK_NAMESPACE, 'frozen-user']);
      // Meanwhile the lock is held: another session cannot take it.
      const busy = await sql<{ got: boolean }>`
        SELECT pg_try_advisory_xact_lock(${USER_LOCK_NAMESPACE}, hashtext('frozen-user')) AS got`.execute(other.db);
      expect(busy.rows[0]?.got).toBe(false);

      await sleep(1_000); // frozen: no statement for longer than the timeout
      const taken = await sql<{ got: boolean }>`
        SELECT pg_try_advisory_xact_lock(${USER_LOCK_NAMESPACE}, hashtext('frozen-user')) AS got`.execute(other.db);
      expect(taken.rows[0]?.got).toBe(true);
      // The frozen session was terminated: its next statement fails, nothing it did committed.
      await expect(client.query('SELECT 1')).rejects.toThrow(/idle-in-transaction timeout|terminat|Connection/i);
      client.release(true);
    } finally {
      await frozen.close();
      await other.close();
    }
  });
});
