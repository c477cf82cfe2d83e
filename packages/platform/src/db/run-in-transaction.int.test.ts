import { sql } from 'kysely';
import { createEmptyTestDatabase, type EmptyTestDatabase } from '../testing/test-database';
import { createDb, type Database } from './create-db';
import { commitWith, rollbackWith, runInTransaction } from './run-in-transaction';

describe('runInTransaction', () => {
  let database: EmptyTestDatabase;
  // One connection: a transaction that did not give its connection back would hang the next one.
  let single: Database<unknown>;
  beforeAll(async () => {
    database = await createEmptyTestDatabase();
    await sql`CREATE TABLE transaction_probe (label text NOT NULL)`.execute(database.db);
    single = createDb({
      connectionString: database.url,
      applicationName: 'tally-run-in-transaction',
      maxConnections: 1,
    });
  });
  afterAll(async () => {
    await single.close();
    await database.drop();
  });

  const labels = async () =>
    (await sql<{ label: string }>`SELECT label FROM transaction_probe ORDER BY label`.execute(database.db)).rows.map(
      (row) => row.label,
    );
  const insert = (label: string) => sql`INSERT INTO transaction_probe (label) VALUES (${label})`;

  it('keeps the writes of a commit decision and undoes those of a rollback decision, returning the value of each, and a throw rolls back and reaches the caller', async () => {
    const committed = await runInTransaction(single.db, async (trx) => {
      await insert('committed').execute(trx);
      return commitWith('kept');
    });
    const rolledBack = await runInTransaction(single.db, async (trx) => {
      await insert('rolled-back').execute(trx);
      return rollbackWith('undone');
    });
    const thrown = await runInTransaction(single.db, async (trx) => {
      await insert('thrown').execute(trx);
      throw new Error('work failed');
    }).catch((error: unknown) => error);
    // A failed statement leaves the transaction aborted; the rollback must still release it.
    const failed = await runInTransaction(single.db, async (trx) => {
      await insert('failed').execute(trx);
      await sql`SELECT 1 / 0`.execute(trx);
      return commitWith('never');
    }).catch((error: unknown) => error);

    expect({ committed, rolledBack, thrown: String(thrown), failed: String(failed) }).toEqual({
      committed: 'kept',
      rolledBack: 'undone',
      thrown: 'Error: work failed',
      failed: 'error: division by zero',
    });
    expect(await labels()).toEqual(['committed']);
    // The pool's only connection came back every time.
    expect((await sql<{ one: number }>`SELECT 1 AS one`.execute(single.db)).rows).toEqual([{ one: 1 }]);
  });
});
