import { type DB, USER_LOCK_NAMESPACE } from '@tally/billing-core';
import { createTestDatabase, type TestDatabase } from '@tally/billing-core/testing';
import { createDb } from '@tally/platform';
import { sql } from 'kysely';

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * A process frozen inside a transaction (SIGSTOP, a paused VM) keeps its session, and with it the
 * user's advisory lock. Every transaction createDb opens sets an idle-in-transaction timeout for
 * itself (SET LOCAL, nothing on the session, so it works behind PgBouncer), which makes Postgres
 * end that session and frees the lock for the worker that took the job over (docs/reliability.md).
 */
describe('a transaction left idle by a frozen process', () => {
  let database: TestDatabase;
  beforeAll(async () => {
    database = await createTestDatabase();
  });
  afterAll(() => database.drop());

  it('is ended by Postgres after the idle-in-transaction timeout, releasing the user lock it held', async () => {
    const frozen = createDb<DB>({ connectionString: database.url, maxConnections: 1, idleInTransactionTimeoutMs: 300 });
    const other = createDb<DB>({ connectionString: database.url, maxConnections: 1 });
    try {
      let locked: () => void = () => undefined;
      const holding = new Promise<void>((resolve) => {
        locked = resolve;
      });
      const transaction = frozen.db.transaction().execute(async (trx) => {
        await sql`SELECT pg_advisory_xact_lock(${USER_LOCK_NAMESPACE}, hashtext('frozen-user'))`.execute(trx);
        locked();
        await sleep(1_000); // frozen: no statement for longer than the timeout
        await sql`INSERT INTO users (id) VALUES ('frozen-user')`.execute(trx);
      });
      const outcome = transaction.then(
        () => 'committed',
        (error: unknown) => error,
      );
      await holding;
      // Meanwhile the lock is held: another session cannot take it.
      const busy = await sql<{ got: boolean }>`
        SELECT pg_try_advisory_xact_lock(${USER_LOCK_NAMESPACE}, hashtext('frozen-user')) AS got`.execute(other.db);
      expect(busy.rows[0]?.got).toBe(false);

      // The frozen session was terminated: its next statement fails, nothing it did committed.
      expect(String(await outcome)).toMatch(/idle-in-transaction timeout|terminat|Connection/i);
      const taken = await sql<{ got: boolean }>`
        SELECT pg_try_advisory_xact_lock(${USER_LOCK_NAMESPACE}, hashtext('frozen-user')) AS got`.execute(other.db);
      expect(taken.rows[0]?.got).toBe(true);
      const users = await other.db.selectFrom('users').select('id').where('id', '=', 'frozen-user').execute();
      expect(users).toEqual([]);
    } finally {
      await frozen.close();
      await other.close();
    }
  });

  it('sets the timeout inside every transaction only, never on the session a pooler would hand on', async () => {
    const pooled = createDb<DB>({ connectionString: database.url, maxConnections: 1, idleInTransactionTimeoutMs: 300 });
    try {
      const show = sql<{ value: string }>`SELECT current_setting('idle_in_transaction_session_timeout') AS value`;
      const server = (await show.execute(database.db)).rows[0]?.value;
      const inside = await pooled.db.transaction().execute(async (trx) => (await show.execute(trx)).rows[0]?.value);
      const serializable = await pooled.db
        .transaction()
        .setIsolationLevel('serializable')
        .execute(async (trx) => (await show.execute(trx)).rows[0]?.value);
      const controlled = await pooled.db.startTransaction().execute();
      const insideControlled = (await show.execute(controlled)).rows[0]?.value;
      await controlled.commit().execute();
      // The same (only) connection, after the transactions: the server's value again.
      const after = (await show.execute(pooled.db)).rows[0]?.value;
      expect({ inside, serializable, insideControlled, after }).toEqual({
        inside: '300ms',
        serializable: '300ms',
        insideControlled: '300ms',
        after: server,
      });
      expect(server).not.toBe('300ms');
    } finally {
      await pooled.close();
    }
  });
});
