import pg from 'pg';
import { createTestDatabase, type TestDatabase } from '../testing/test-services';

/**
 * Migration 0033 dropped checks that other guards already hold (the foreign keys to inbox events
 * and from lots to wallets) and calls the wallet guard only to refuse. These are the guards left
 * holding those guarantees, and the proof that a posting no longer pays for the guard's call.
 */
describe('the guards a posting relies on (migration 0033)', () => {
  let database: TestDatabase;
  let client: pg.Client;

  beforeAll(async () => {
    database = await createTestDatabase();
    // Direct, never through a pooler: the session settings below must stay on this connection.
    client = new pg.Client({ connectionString: database.directUrl });
    await client.connect();
  });
  afterAll(async () => {
    await client.end();
    await database.drop();
  });

  const storeEvent = async (eventId: string) =>
    (
      await client.query<{ id: string }>(
        `INSERT INTO inbox_events (provider, provider_event_id, type, raw_body)
         VALUES ('stripe', $1, 'payment_intent.succeeded', '{}') RETURNING id`,
        [eventId],
      )
    ).rows[0]?.id;

  it('refuses to delete or truncate inbox events, so whatever names one never loses it', async () => {
    const id = await storeEvent('evt_guard_kept');
    await expect(client.query('DELETE FROM inbox_events WHERE id = $1', [id])).rejects.toThrow(
      /inbox events are never removed \(DELETE rejected\)/,
    );
    await expect(client.query('DELETE FROM inbox_events WHERE false')).rejects.toThrow(/never removed/);
    await expect(client.query('TRUNCATE inbox_events CASCADE')).rejects.toThrow(
      /inbox events are never removed \(TRUNCATE rejected\)/,
    );
    const kept = await client.query('SELECT 1 FROM inbox_events WHERE id = $1', [id]);
    expect(kept.rowCount).toBe(1);
  });

  it('fails the commit of a lot whose wallet does not exist (the sum trigger, now the only check)', async () => {
    await client.query(`INSERT INTO users (id) VALUES ('guard-no-wallet')`);
    await client.query('BEGIN');
    try {
      await client.query(
        `INSERT INTO credit_lots (user_id, category, source, amount, remaining)
         VALUES ('guard-no-wallet', 'promotional', 'test:guard:orphan-lot', 5, 5)`,
      );
      await expect(client.query('COMMIT')).rejects.toThrow(/wallet guard-no-wallet holds <NULL> tokens/);
    } finally {
      await client.query('ROLLBACK').catch(() => undefined);
    }
    const lots = await client.query(`SELECT 1 FROM credit_lots WHERE user_id = 'guard-no-wallet'`);
    expect(lots.rowCount).toBe(0);
  });

  it('calls the wallet guard only to refuse: a posting moves the balance without it, a direct write is refused', async () => {
    await client.query(`SET track_functions = 'pl'`);
    await client.query(`INSERT INTO users (id) VALUES ('guard-calls')`);
    await client.query(`INSERT INTO wallets (user_id) VALUES ('guard-calls')`);
    const calls = async (fn: string) =>
      Number(
        (
          await client.query<{ calls: string }>(
            `SELECT coalesce(pg_stat_get_xact_function_calls($1::regproc), 0) AS calls`,
            [fn],
          )
        ).rows[0]?.calls,
      );
    await client.query('BEGIN');
    try {
      await client.query(
        `INSERT INTO ledger_entries (user_id, reference, amount, balance_before, balance_after, reason)
         VALUES ('guard-calls', 'test:guard:calls', 7, 0, 7, 'test')`,
      );
      // The ledger's trigger ran (the count works) and moved the balance; the guard was not called.
      expect(await calls('ledger_entries_apply_to_wallet')).toBe(1);
      expect(await calls('wallets_guard_balance')).toBe(0);
      await client.query(`UPDATE wallets SET updated_at = now() WHERE user_id = 'guard-calls'`);
      expect(await calls('wallets_guard_balance')).toBe(0);
      await client.query('COMMIT');
    } finally {
      await client.query('ROLLBACK').catch(() => undefined);
    }
    const wallet = await client.query(`SELECT balance FROM wallets WHERE user_id = 'guard-calls'`);
    expect(wallet.rows).toEqual([{ balance: '7' }]);

    await expect(client.query(`UPDATE wallets SET balance = 8 WHERE user_id = 'guard-calls'`)).rejects.toThrow(
      /only through ledger entries/,
    );
    await expect(client.query(`DELETE FROM wallets WHERE user_id = 'guard-calls'`)).rejects.toThrow(
      /wallets are never deleted/,
    );
    await client.query(`INSERT INTO users (id) VALUES ('guard-rich')`);
    await expect(client.query(`INSERT INTO wallets (user_id, balance) VALUES ('guard-rich', 1)`)).rejects.toThrow(
      /starts at balance 0/,
    );
  });
});
