import { sql } from 'kysely';
import { rowsReadFrom } from '../testing/rows-read';
import { createTestDatabase, type TestDatabase } from '../testing/test-services';
import { lockUsersAndReadInboxEvents, markInboxEventsFinished } from './inbox-transitions';

/**
 * The batch's finishing statement over a backlog, with statistics taken while nothing waited (the
 * usual state of a drained inbox): the planner then believes no row is `received`. The statement
 * must still read only the rows it marks, by id, in a plan of either kind (a prepared statement
 * runs a generic plan after five executions; without prepared statements every plan is custom).
 */
describe('marking a batch finished over a backlog with stale statistics', () => {
  let database: TestDatabase;
  const backlog = 3_000;

  beforeAll(async () => {
    database = await createTestDatabase();
    const { db } = database;
    // The statistics must stay as taken below: no autovacuum analyze in between.
    await sql`ALTER TABLE inbox_events SET (autovacuum_enabled = false)`.execute(db);
    await sql`
      INSERT INTO inbox_events (provider, provider_event_id, type, user_id, raw_body, status, attempts, processed_at, outcome_code)
      SELECT 'revenuecat', 'stale-done-' || g, 'NON_RENEWING_PURCHASE', 'stale-user-' || (g % 100), '{}', 'processed', 1, now(), 'credited'
        FROM generate_series(1, 500) AS g`.execute(db);
    await sql`ANALYZE inbox_events`.execute(db);
    await sql`
      INSERT INTO inbox_events (provider, provider_event_id, type, user_id, raw_body)
      SELECT 'revenuecat', 'stale-waiting-' || g, 'NON_RENEWING_PURCHASE', 'stale-user-' || (g % 100), '{}'
        FROM generate_series(1, ${backlog}) AS g`.execute(db);
  });
  afterAll(() => database.drop());

  it.each(['force_generic_plan', 'force_custom_plan'])('reads only the rows it marks (%s)', async (planMode) => {
    const waiting = await database.db
      .selectFrom('inbox_events')
      .select('id')
      .where('status', '=', 'received')
      .orderBy('id')
      .limit(8)
      .execute();
    const ids = waiting.map((row) => Number(row.id));
    expect(ids).toHaveLength(8);

    await database.db.transaction().execute(async (trx) => {
      await sql`SELECT set_config('plan_cache_mode', ${planMode}, true)`.execute(trx);
      const before = await rowsReadFrom(trx, 'inbox_events');
      const marked = await markInboxEventsFinished(
        trx,
        ids.map((inboxEventId) => ({
          inboxEventId,
          result: { kind: 'processed' as const, code: 'credited' as const, detail: 'stale statistics test' },
        })),
        'first-attempt',
      );
      const read = (await rowsReadFrom(trx, 'inbox_events')) - before;
      expect([...marked.keys()].sort((a, b) => a - b)).toEqual(ids);
      // Its own 8 rows (a plan over the pending or status index reads all 3,000 waiting rows).
      expect(read).toBeGreaterThanOrEqual(8);
      expect(read).toBeLessThanOrEqual(16);
    });
    const rows = await database.db
      .selectFrom('inbox_events')
      .select(['status', 'attempts'])
      .where('id', 'in', ids)
      .execute();
    expect(rows).toEqual(ids.map(() => ({ status: 'processed', attempts: 1 })));
  });
});

/**
 * An attempt's first statement over ids linked since the statistics were taken (a backlog of new
 * customers: user_aliases grows while its statistics say it is small). Each row's link must be a
 * probe of its key, in a plan of either kind: a join of the batch's rows with every alias (the
 * plan a prepared statement kept from small tables) reads the whole table on every attempt.
 */
describe("locking a batch's users over aliases grown since their statistics", () => {
  let database: TestDatabase;
  const grown = 3_000;

  beforeAll(async () => {
    database = await createTestDatabase();
    const { db } = database;
    await sql`ALTER TABLE user_aliases SET (autovacuum_enabled = false)`.execute(db);
    const link = (from: number, to: number) => sql`
      WITH made AS (
        INSERT INTO users (id) SELECT 'grown-user-' || g FROM generate_series(${from}::int, ${to}::int) AS g RETURNING id)
      INSERT INTO user_aliases (alias, user_id) SELECT 'grown-alias-' || substr(id, 12), id FROM made`;
    await link(1, 50).execute(db);
    await sql`ANALYZE user_aliases`.execute(db);
    await link(51, grown).execute(db);
    await sql`
      INSERT INTO inbox_events (provider, provider_event_id, type, user_id, raw_body)
      SELECT 'revenuecat', 'grown-event-' || g, 'NON_RENEWING_PURCHASE', 'grown-alias-' || (g * 300), '{}'
        FROM generate_series(1, 8) AS g`.execute(db);
  });
  afterAll(() => database.drop());

  it.each(['force_generic_plan', 'force_custom_plan'])('reads only the links of its rows (%s)', async (planMode) => {
    const events = await database.db
      .selectFrom('inbox_events')
      .select('id')
      .where('provider_event_id', 'like', 'grown-event-%')
      .execute();
    const ids = events.map((row) => Number(row.id));
    expect(ids).toHaveLength(8);

    await database.db.transaction().execute(async (trx) => {
      await sql`SELECT set_config('plan_cache_mode', ${planMode}, true)`.execute(trx);
      const before = await rowsReadFrom(trx, 'user_aliases');
      const rows = await lockUsersAndReadInboxEvents(trx, ids, { lockRows: false });
      const read = (await rowsReadFrom(trx, 'user_aliases')) - before;
      expect(rows.map((row) => row.id)).toEqual([...ids].sort((a, b) => a - b));
      // The 8 rows' links (a join with every alias reads all 3,000).
      expect(read).toBeGreaterThanOrEqual(8);
      expect(read).toBeLessThanOrEqual(16);
      // Each linked user's advisory lock is held (the namespace is the engine's).
      const { rows: held } = await sql<{ n: number }>`
        SELECT count(*)::int AS n FROM pg_locks WHERE locktype = 'advisory' AND pid = pg_backend_pid()`.execute(trx);
      expect(held[0]?.n).toBe(16);
    });
  });
});
