import { sql, type Transaction } from 'kysely';
import type { DB } from '../db/schema';
import { createTestDatabase, type TestDatabase } from '../testing/test-services';
import { markInboxEventsFinished } from './inbox-transitions';

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

  /**
   * Heap rows this transaction has read from inbox_events so far: through its indexes (counted on
   * each index), by bitmap scans (on the table) and by sequential scans (returned, on the table).
   */
  async function inboxRowsRead(trx: Transaction<DB>): Promise<number> {
    const { rows } = await sql<{ read: string }>`
      SELECT (pg_stat_get_xact_tuples_fetched('inbox_events'::regclass)
              + pg_stat_get_xact_tuples_returned('inbox_events'::regclass)
              + (SELECT sum(pg_stat_get_xact_tuples_fetched(indexrelid)) FROM pg_index
                  WHERE indrelid = 'inbox_events'::regclass))::text AS read`.execute(trx);
    return Number(rows[0]?.read);
  }

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
      const before = await inboxRowsRead(trx);
      const marked = await markInboxEventsFinished(
        trx,
        ids.map((inboxEventId) => ({
          inboxEventId,
          result: { kind: 'processed' as const, code: 'credited' as const, detail: 'stale statistics test' },
        })),
        'first-attempt',
      );
      const read = (await inboxRowsRead(trx)) - before;
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
