import { createDb, type Database } from '@tally/platform/db';
import { sql } from 'kysely';
import type { DB } from '../db/schema';
import { rowsReadFrom } from '../testing/rows-read';
import { testOutbox } from '../testing/test-outbox';
import { createTestDatabase, type TestDatabase } from '../testing/test-services';
import { inUnitOfWork } from '../unit-of-work/unit-of-work';
import { postLedgerEntries } from './post-ledger-entries';
import type { LedgerPosting } from './post-ledger-entry';

/**
 * The batched posting statement on a connection that prepared it while the tables were small (a
 * worker that started on a new deployment, or the bench's drain): its generic plan is kept while
 * the wallets and entries grow, with no new statistics to replace it. Each posting's wallet and
 * entry must still be found by a probe of its key: the join such a plan kept read every wallet
 * twice and every entry on each batch (two thirds of a drain's posting time at 10,000 wallets).
 */
describe('the batched posting statement, planned while the tables were small', () => {
  let database: TestDatabase;
  /** One connection, prepared statements on (as a worker on a direct connection runs them). */
  let early: Database<DB>;
  const grown = 3_000;
  const credit = (userId: string, reference: string): LedgerPosting => ({
    userId,
    reference,
    amount: 5,
    reason: 'test',
    lots: { kind: 'credit', category: 'purchased', expiresAt: null },
  });
  const userIds = (from: number, to: number) =>
    Array.from({ length: to - from + 1 }, (_, index) => `grown-${from + index}`);
  const makeUsers = (db: Database<DB>['db'], from: number, to: number) =>
    sql`
      WITH made AS (INSERT INTO users (id) SELECT 'grown-' || g FROM generate_series(${from}::int, ${to}::int) AS g RETURNING id)
      INSERT INTO wallets (user_id) SELECT id FROM made`.execute(db);
  const creditAll = (db: Database<DB>['db'], users: string[], tag: string) =>
    inUnitOfWork({ db, outbox: testOutbox }, (uow) =>
      postLedgerEntries(
        uow,
        users.map((user) => credit(user, `grown:${tag}:${user}`)),
      ),
    );

  beforeAll(async () => {
    database = await createTestDatabase();
    // No statistics taken while the test runs: nothing replaces the plan made early.
    for (const table of ['wallets', 'ledger_entries', 'credit_lots', 'users']) {
      await sql`ALTER TABLE ${sql.table(table)} SET (autovacuum_enabled = false)`.execute(database.db);
    }
    early = createDb<DB>({ connectionString: database.directUrl, maxConnections: 1, preparedStatements: true });
    // Its generic plan from the first execution on (in auto mode a prepared statement takes it
    // after five custom plans, when it does not cost more than theirs).
    await sql`SET plan_cache_mode = force_generic_plan`.execute(early.db);
    await makeUsers(database.db, 1, 60);
    // Six batches of five on the small tables: the statement is named (and planned) at the third.
    for (let batch = 0; batch < 6; batch += 1) {
      await creditAll(early.db, userIds(batch * 5 + 1, batch * 5 + 5), 'small');
    }
    await makeUsers(database.db, 61, grown);
    for (let start = 61; start <= grown; start += 500) {
      await creditAll(database.db, userIds(start, Math.min(grown, start + 499)), 'grown');
    }
  });
  afterAll(async () => {
    await early.close();
    await database.drop();
  });

  it("reads only its postings' wallets and entries", async () => {
    const users = Array.from({ length: 8 }, (_, index) => `grown-${(index + 1) * 300}`);
    const read = await inUnitOfWork({ db: early.db, outbox: testOutbox }, async (uow) => {
      const before = {
        wallets: await rowsReadFrom(uow.trx, 'wallets'),
        entries: await rowsReadFrom(uow.trx, 'ledger_entries'),
      };
      const results = await postLedgerEntries(
        uow,
        users.map((user) => credit(user, `grown:measured:${user}`)),
      );
      expect(results.map((result) => result.kind)).toEqual(users.map(() => 'posted'));
      return {
        wallets: (await rowsReadFrom(uow.trx, 'wallets')) - before.wallets,
        entries: (await rowsReadFrom(uow.trx, 'ledger_entries')) - before.entries,
      };
    });
    // The premise: the statement ran on the plan it made while the tables were small.
    const { rows: prepared } = await sql<{ generic: number }>`
      SELECT generic_plans::int AS generic FROM pg_prepared_statements
       WHERE statement LIKE '%WITH input AS MATERIALIZED%INSERT INTO ledger_entries%'`.execute(early.db);
    expect(prepared).toHaveLength(1);
    expect(prepared[0]?.generic).toBeGreaterThanOrEqual(4);
    // A few reads of each posting's wallet (its lock, the snapshot's version, the foreign key
    // checks, the ledger trigger's update) and none of the other 2,992; no entry of the 3,000
    // posted before (the statement looks only for its own references, and finds none).
    expect(read.wallets).toBeGreaterThanOrEqual(8);
    expect(read.wallets).toBeLessThanOrEqual(8 * 8);
    expect(read.entries).toBeLessThanOrEqual(8 * 2);
    const { rows } = await sql<{ balance: number }>`
      SELECT balance::int FROM wallets WHERE user_id = ANY(${users}::text[])`.execute(database.db);
    expect(rows).toEqual(users.map(() => ({ balance: 10 })));
  });

  it('is planned once per connection: its custom plans, seeing no batch size, give way to the generic one', async () => {
    const auto = createDb<DB>({ connectionString: database.directUrl, maxConnections: 1, preparedStatements: true });
    try {
      // Batches of two, as a quiet moment's captures come: named at the third, then five custom plans.
      for (let batch = 0; batch < 12; batch += 1) {
        const pair = [`grown-${2_000 + batch * 2}`, `grown-${2_001 + batch * 2}`];
        await creditAll(auto.db, pair, 'planned');
      }
      const { rows } = await sql<{ generic: number; custom: number }>`
        SELECT generic_plans::int AS generic, custom_plans::int AS custom FROM pg_prepared_statements
         WHERE statement LIKE '%WITH input AS MATERIALIZED%INSERT INTO ledger_entries%'`.execute(auto.db);
      expect(rows).toEqual([{ generic: 5, custom: 5 }]);
    } finally {
      await auto.close();
    }
  });
});
