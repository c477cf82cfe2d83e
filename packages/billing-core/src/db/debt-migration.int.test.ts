import { migrate } from '@tally/platform/db';
import pg from 'pg';
import { createDatabaseMigratedBefore } from '../testing/test-services';
import { migrationsDir } from './migrations-dir';

/**
 * Migration 0039: today's open shortfalls become the wallet's debt, once, on a database of the
 * previous release with shortfalls in every state; from then on the trigger keeps the debt, and
 * the database refuses a negative debt, a settlement past what is owed, and deleting a source.
 */
describe('migration 0039 (open shortfalls become debt)', () => {
  let database: Awaited<ReturnType<typeof createDatabaseMigratedBefore>>;
  let client: pg.Client;

  beforeAll(async () => {
    // A database of the previous release: migrated to 0038.
    database = await createDatabaseMigratedBefore('0039');
    client = new pg.Client({ connectionString: database.url });
    await client.connect();
  });
  afterAll(async () => {
    await client.end();
    await database.drop();
  });

  const wallet = async (userId: string) => {
    await client.query('INSERT INTO users (id) VALUES ($1)', [userId]);
    await client.query('INSERT INTO wallets (user_id) VALUES ($1)', [userId]);
  };
  /** A shortfall row as the previous release wrote it. */
  const shortfall = (userId: string, owed: number, recovered: number, closed: boolean) =>
    client.query(
      `INSERT INTO take_back_shortfalls (user_id, source, source_id, take_back_reference, shortfall, recovered,
                                         last_ledger_entry_id, closed_at)
       VALUES ($1, 'stripe_refund', '1', 'stripe:refund:' || gen_random_uuid(), $2, $3, 0,
               CASE WHEN $4::boolean THEN now() END)`,
      [userId, owed, recovered, closed],
    );
  const debts = async () =>
    Object.fromEntries(
      (
        await client.query<{ user_id: string; debt: string }>('SELECT user_id, debt FROM wallets ORDER BY user_id')
      ).rows.map((row) => [row.user_id, Number(row.debt)]),
    );

  it('turns the open shortfalls into debt exactly once, then keeps it by the trigger and the constraints', async () => {
    await wallet('owes');
    await shortfall('owes', 80, 30, false); // 50 open
    await shortfall('owes', 20, 0, false); // 20 open
    await shortfall('owes', 40, 0, true); // a won chargeback closed it: owes nothing
    await wallet('settled');
    await shortfall('settled', 10, 10, false); // settled in full by a freed hold
    await wallet('clean');

    await migrate(database.url, migrationsDir);
    expect(await debts()).toEqual({ clean: 0, owes: 70, settled: 0 });
    // Applying again does nothing (every migration is recorded once).
    await migrate(database.url, migrationsDir);
    expect(await debts()).toEqual({ clean: 0, owes: 70, settled: 0 });

    // The trigger keeps it from now on: a new source, a settlement, a forgive, a closing.
    await shortfall('clean', 15, 0, false);
    await client.query(
      "UPDATE take_back_shortfalls SET recovered = recovered + 5 WHERE user_id = 'owes' AND shortfall = 20",
    );
    await client.query("UPDATE take_back_shortfalls SET forgiven = 10 WHERE user_id = 'owes' AND shortfall = 80");
    expect(await debts()).toEqual({ clean: 15, owes: 55, settled: 0 });
    await client.query("UPDATE take_back_shortfalls SET closed_at = now() WHERE user_id = 'clean'");
    expect(await debts()).toEqual({ clean: 0, owes: 55, settled: 0 });

    // What the database refuses.
    await expect(client.query("UPDATE wallets SET debt = -1 WHERE user_id = 'clean'")).rejects.toThrow(
      /wallets_debt_ck/,
    );
    await expect(
      client.query("UPDATE take_back_shortfalls SET forgiven = 100 WHERE user_id = 'owes' AND shortfall = 80"),
    ).rejects.toThrow(/take_back_shortfalls_forgiven_ck/);
    await expect(client.query("DELETE FROM take_back_shortfalls WHERE user_id = 'owes'")).rejects.toThrow(
      /closed, never deleted or moved/,
    );
    await expect(
      client.query("UPDATE take_back_shortfalls SET user_id = 'clean' WHERE user_id = 'owes'"),
    ).rejects.toThrow(/closed, never deleted or moved/);
    expect(await debts()).toEqual({ clean: 0, owes: 55, settled: 0 });
  });
});
