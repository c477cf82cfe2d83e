import { cp, mkdtemp, readdir, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import pg from 'pg';
import { testDatabaseServerUrl } from '../testing/test-services';
import { ensureDatabaseExists, migrate, migrationsDir } from './migrate';

/** Migration 0012: one payment environment vocabulary in inbox_events.environment. */
describe('migration 0012 (payment environment vocabulary)', () => {
  const name = `tally_test_env_vocab_${process.pid}_${Date.now().toString(36)}`;
  const url = (() => {
    const parsed = new URL(testDatabaseServerUrl());
    parsed.pathname = `/${name}`;
    return parsed.toString();
  })();
  let client: pg.Client;

  beforeAll(async () => {
    // Migrate to 0011 first, as a database of the previous release.
    const before = await mkdtemp(path.join(tmpdir(), 'tally-migrations-0011-'));
    for (const file of await readdir(migrationsDir)) {
      if (file < '0012') await cp(path.join(migrationsDir, file), path.join(before, file));
    }
    await ensureDatabaseExists(url);
    await migrate(url, before);
    await rm(before, { recursive: true });
    client = new pg.Client({ connectionString: url });
    await client.connect();
  });
  afterAll(async () => {
    await client.end();
    const admin = new pg.Client({ connectionString: testDatabaseServerUrl() });
    await admin.connect();
    await admin.query(`DROP DATABASE IF EXISTS ${pg.escapeIdentifier(name)} WITH (FORCE)`);
    await admin.end();
  });

  /** Inserts an inbox row as ingest of the previous release wrote it. */
  const insertLegacy = (id: string, provider: string, livemode: boolean | null, environment: string | null) =>
    client.query(
      `INSERT INTO inbox_events (provider, provider_event_id, type, livemode, environment, raw_body)
       VALUES ($1, $2, 't', $3, $4, '{}')`,
      [provider, id, livemode, environment],
    );
  const environments = async () =>
    Object.fromEntries(
      (
        await client.query<{ provider_event_id: string; livemode: boolean | null; environment: string | null }>(
          'SELECT provider_event_id, livemode, environment FROM inbox_events ORDER BY id',
        )
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

    await migrate(url);
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
      client.query(`UPDATE inbox_events SET environment = 'live' WHERE provider_event_id = 'stripe-live'`),
    ).rejects.toMatchObject({ constraint: 'inbox_events_environment_ck' });
  });
});
