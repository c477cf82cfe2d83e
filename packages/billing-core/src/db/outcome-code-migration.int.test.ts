import { outcomeCodes } from '../inbox/outcome-codes';
import { useDatabaseMigratedBefore } from '../testing/test-services';

/** Migration 0026: one outcome code for a partial refund, in every stored row. */
describe('migration 0026 (one partial refund outcome code)', () => {
  // A database of the previous release: migrated to 0025.
  const database = useDatabaseMigratedBefore('0026');

  /** A finished inbox row with an outcome code, as a worker writes it. */
  const insertFinished = (id: string, provider: string, code: string) =>
    database.client.query(
      `INSERT INTO inbox_events (provider, provider_event_id, type, raw_body, status, outcome_code, processed_at)
       VALUES ($1, $2, 't', '{}', 'processed', $3, now())`,
      [provider, id, code],
    );
  const codes = async () =>
    Object.fromEntries(
      (
        await database.client.query<{ provider_event_id: string; outcome_code: string | null }>(
          'SELECT provider_event_id, outcome_code FROM inbox_events ORDER BY id',
        )
      ).rows.map((row) => [row.provider_event_id, row.outcome_code]),
    );

  it('rewrites every stored refunded_partially to partially_refunded and translates writes of the previous release', async () => {
    expect(outcomeCodes.processed).toContain('partially_refunded');
    expect(outcomeCodes.processed).not.toContain('refunded_partially');
    await insertFinished('rc-partial', 'revenuecat', 'refunded_partially');
    await insertFinished('stripe-partial', 'stripe', 'partially_refunded');
    await insertFinished('rc-full', 'revenuecat', 'refunded');

    await database.migrateRest();
    expect(await codes()).toEqual({
      'rc-partial': 'partially_refunded',
      'stripe-partial': 'partially_refunded',
      'rc-full': 'refunded',
    });

    // A worker of the previous release, still running during the rollout: its insert and its
    // finished mark (an update of a received row) both store the one code.
    await insertFinished('late-insert', 'revenuecat', 'refunded_partially');
    await database.client.query(
      `INSERT INTO inbox_events (provider, provider_event_id, type, raw_body) VALUES ('revenuecat', 'late-mark', 't', '{}')`,
    );
    await database.client.query(
      `UPDATE inbox_events SET status = 'processed', outcome_code = 'refunded_partially', processed_at = now()
        WHERE provider_event_id = 'late-mark'`,
    );
    expect(await codes()).toMatchObject({ 'late-insert': 'partially_refunded', 'late-mark': 'partially_refunded' });
  });
});
