import { useDatabaseMigratedBefore } from '../testing/test-services';

/** Migration 0012: one payment environment vocabulary in inbox_events.environment. */
describe('migration 0012 (payment environment vocabulary)', () => {
  // A database of the previous release: migrated to 0011.
  const database = useDatabaseMigratedBefore('0012');

  /** Inserts an inbox row as ingest of the previous release wrote it. */
  const insertLegacy = (id: string, provider: string, livemode: boolean | null, environment: string | null) =>
    database.client.query(
      `INSERT INTO inbox_events (provider, provider_event_id, type, livemode, environment, raw_body)
       VALUES ($1, $2, 't', $3, $4, '{}')`,
      [provider, id, livemode, environment],
    );
  const environments = async () =>
    Object.fromEntries(
      (
        await database.client.query<{
          provider_event_id: string;
          livemode: boolean | null;
          environment: string | null;
        }>('SELECT provider_event_id, livemode, environment FROM inbox_events ORDER BY id')
      ).rows.map((row) => [row.provider_event_id, [row.livemode, row.environment]]),
    );

  it('rewrites every stored environment to production/sandbox, keeps translating inserts of the previous release, and refuses any other value', async () => {
    await insertLegacy('stripe-live', 'stripe', true, 'live');
    await insertLegacy('stripe-test', 'stripe', false, 'test');
    await insertLegacy('stripe-unknown', 'stripe', null, null);
    await insertLegacy('rc-production', 'revenuecat', true, 'PRODUCTION');
    await insertLegacy('rc-sandbox', 'revenuecat', false, 'SANDBOX');
    // An environment RevenueCat does not document: the policy has always treated it as sandbox.
    await insertLegacy('rc-staging', 'revenuecat', false, 'STAGING');

    await database.migrateRest();
    expect(await environments()).toEqual({
      'stripe-live': [true, 'production'],
      'stripe-test': [false, 'sandbox'],
      'stripe-unknown': [null, null],
      'rc-production': [true, 'production'],
      'rc-sandbox': [false, 'sandbox'],
      'rc-staging': [false, 'sandbox'],
    });

    // An ingest replica of the previous release, still running during the rollout.
    await insertLegacy('late-live', 'stripe', true, 'live');
    await insertLegacy('late-sandbox', 'revenuecat', false, 'SANDBOX');
    // The current ingest.
    await insertLegacy('new-production', 'stripe', true, 'production');
    expect(await environments()).toMatchObject({
      'late-live': [true, 'production'],
      'late-sandbox': [false, 'sandbox'],
      'new-production': [true, 'production'],
    });

    // Nothing can store an environment that disagrees with livemode, or name one without it.
    await expect(insertLegacy('contradiction', 'stripe', true, 'sandbox')).rejects.toMatchObject({
      constraint: 'inbox_events_environment_livemode_ck',
    });
    await expect(insertLegacy('no-livemode', 'revenuecat', null, 'production')).rejects.toMatchObject({
      constraint: 'inbox_events_environment_livemode_ck',
    });
    await expect(
      database.client.query(`UPDATE inbox_events SET environment = 'live' WHERE provider_event_id = 'stripe-live'`),
    ).rejects.toMatchObject({ constraint: 'inbox_events_environment_ck' });
  });
});
