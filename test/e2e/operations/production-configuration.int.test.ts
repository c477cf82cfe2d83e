import { existsSync } from 'node:fs';
import path from 'node:path';
import { createTestDatabase, type TestDatabase, testRedisUrl, uniqueQueuePrefix } from '@tally/billing-core/testing';
import { demoSecretValues } from '@tally/platform';
import { sql } from 'kysely';
import { RunningProcess, repoRoot } from '../../support/built-process';
import { revenueCatTokenPurchase } from '../../support/events';
import { FakeRevenueCat, fakeRevenueCatApiKey } from '../../support/fakes/fake-revenuecat';
import { eventually, signStripe } from '../../support/stack';

/**
 * Configuration in production (product.md): with NODE_ENV=production the root scripts never read
 * `.env.example`, a provider the operator left unconfigured answers 503 not_configured, the
 * public demo secrets and keys are refused, RevenueCat packs are verified, and each process says
 * at start which providers are off. The services run as an operator starts them
 * (`pnpm start:ingest|start:api|start:worker`, i.e. scripts/run.mjs) with explicit variables only.
 */
const demo = {
  stripeWebhookSecret: 'whsec_demo_tally_local_secret',
  revenueCatAuth: 'Bearer rc_demo_webhook_auth',
  appKey: 'app_demo_key',
  adminKey: 'admin_demo_key',
};
const real = {
  revenueCatAuth: 'Bearer rc_production_auth_value',
  appKey: 'app_production_key',
  adminKey: 'admin_production_key',
};

// A developer's own .env would be read by the root scripts (as documented) and change what this
// proves; a clean clone (CI) has none.
const hasDotEnv = existsSync(path.join(repoRoot, '.env'));
const describeWithoutDotEnv = hasDotEnv && process.env.CI !== 'true' ? describe.skip : describe;

describeWithoutDotEnv('NODE_ENV=production through the root scripts, without a .env', () => {
  let database: TestDatabase;
  let fake: FakeRevenueCat;
  const running: RunningProcess[] = [];
  let ingestUrl = '';
  let apiUrl = '';
  let ingest: RunningProcess;
  let api: RunningProcess;
  let worker: RunningProcess;

  const base = () => ({
    NODE_ENV: 'production',
    DATABASE_URL: database.url,
    DATABASE_PREPARED_STATEMENTS: String(database.preparedStatements()),
    REDIS_URL: testRedisUrl(),
    QUEUE_PREFIX: prefix,
  });
  let prefix = '';

  beforeAll(async () => {
    if (hasDotEnv) throw new Error('a .env in the repository root: remove it to run this test');
    database = await createTestDatabase();
    fake = await FakeRevenueCat.start();
    prefix = uniqueQueuePrefix();
    // Stripe left unconfigured on purpose; RevenueCat configured with a value of the operator's.
    ingest = new RunningProcess(
      'ingest',
      { ...base(), INGEST_PORT: '0', REVENUECAT_WEBHOOK_AUTH: real.revenueCatAuth },
      { viaRootScript: true },
    );
    api = new RunningProcess(
      'api',
      { ...base(), API_PORT: '0', APP_API_KEYS: real.appKey, ADMIN_API_KEYS: real.adminKey },
      { viaRootScript: true },
    );
    worker = new RunningProcess(
      'worker',
      {
        ...base(),
        WORKER_METRICS_PORT: '0',
        REVENUECAT_API_KEY: fakeRevenueCatApiKey,
        REVENUECAT_API_BASE_URL: fake.baseUrl,
        // A purchase RevenueCat does not list yet is looked at again soon.
        INBOX_RETRY_LATER_BASE_MS: '200',
        INBOX_RETRY_LATER_MAX_DELAY_MS: '400',
      },
      { viaRootScript: true },
    );
    running.push(ingest, api, worker);
    ingestUrl = `http://127.0.0.1:${(await ingest.waitForLog('ingest listening', 120_000)).port}`;
    apiUrl = `http://127.0.0.1:${(await api.waitForLog('api listening', 120_000)).port}`;
    await worker.waitForLog('worker started', 120_000);
  }, 180_000);

  afterAll(async () => {
    await Promise.all(running.map((child) => child.stop()));
    await fake?.stop();
    await database?.drop();
  });

  it('reads nothing from .env.example and says which providers are off', async () => {
    for (const child of running) {
      expect(child.output).toContain(
        'configuration from the environment and nothing else (NODE_ENV=production never reads .env.example)',
      );
      expect(child.output).not.toContain('demo configuration');
    }
    const ingestProviders = await ingest.waitForLog('providers off: stripe, apple, google_play');
    expect(ingestProviders).toMatchObject({
      providers: { stripe: 'off', revenuecat: 'on', apple: 'off', google_play: 'off' },
    });
    expect(await api.waitForLog('providers off: stripe, revenuecat, apple')).toMatchObject({
      providers: { stripe: 'off', revenuecat: 'off', apple: 'off' },
    });
    expect(
      await worker.waitForLog('providers off: stripe, google_play, ai_studio, app_store_api, smtp, app_webhooks'),
    ).toMatchObject({
      providers: {
        stripe: 'off',
        revenuecat: 'on',
        google_play: 'off',
        ai_studio: 'off',
        app_store_api: 'off',
        smtp: 'off',
        app_webhooks: 'off',
      },
    });
  });

  it('answers an unconfigured provider 503 not_configured, even when signed with the demo secret', async () => {
    const body = JSON.stringify({ id: 'evt_demo_signed', object: 'event', type: 'payment_intent.succeeded' });
    const response = await fetch(`${ingestUrl}/webhooks/stripe`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'stripe-signature': signStripe(body, demo.stripeWebhookSecret) },
      body,
    });
    expect({ status: response.status, body: await response.json() }).toEqual({
      status: 503,
      body: { error: { code: 'not_configured', message: 'Stripe webhooks are not configured' } },
    });
    const stored = await sql<{ n: number }>`SELECT count(*)::int AS n FROM inbox_events`.execute(database.db);
    expect(stored.rows[0]?.n).toBe(0);
  });

  it("refuses the demo RevenueCat authorization and the demo API keys, and accepts the operator's", async () => {
    const webhook = (authorization: string) =>
      fetch(`${ingestUrl}/webhooks/revenuecat`, {
        method: 'POST',
        headers: { authorization, 'content-type': 'application/json' },
        body: revenueCatTokenPurchase({ id: 'rc-demo-auth', userId: 'victim' }),
      });
    expect((await webhook(demo.revenueCatAuth)).status).toBe(401);
    const get = (pathname: string, key: string) =>
      fetch(`${apiUrl}${pathname}`, { headers: { authorization: `Bearer ${key}` } }).then((r) => r.status);
    expect(await get('/v1/users/someone/wallet', demo.appKey)).toBe(401);
    expect(await get('/admin/events', demo.adminKey)).toBe(401);
    expect(await get('/v1/users/someone/wallet', real.appKey)).toBe(200);
    expect(await get('/admin/events', real.adminKey)).toBe(200);
  });

  it('verifies a RevenueCat pack against the REST read before crediting it', async () => {
    // A customer RevenueCat knows, whose purchase it does not list yet.
    fake.setSubscriber('buyer', {});
    const body = JSON.parse(revenueCatTokenPurchase({ id: 'rc-prod-pack', userId: 'buyer' }));
    body.event.transaction_id = 'txn-prod-1';
    const response = await fetch(`${ingestUrl}/webhooks/revenuecat`, {
      method: 'POST',
      headers: { authorization: real.revenueCatAuth, 'content-type': 'application/json' },
      body: JSON.stringify(body),
    });
    expect(response.status).toBe(200);
    // RevenueCat does not list the purchase: the worker asked, and credited nothing.
    const deferred = await eventually('the pack deferred after a REST read', async () => {
      const row = await database.db
        .selectFrom('inbox_events')
        .select(['status', 'outcome_code'])
        .where('provider_event_id', '=', 'rc-prod-pack')
        .executeTakeFirst();
      return row?.outcome_code === 'waiting' && fake.callsFor('buyer') > 0 && row;
    });
    expect(deferred).toEqual({ status: 'received', outcome_code: 'waiting' });
    const wallet = () =>
      fetch(`${apiUrl}/v1/users/buyer/wallet`, { headers: { authorization: `Bearer ${real.appKey}` } }).then(
        (r) => r.json() as Promise<{ balance: number }>,
      );
    expect((await wallet()).balance).toBe(0);
    fake.addNonSubscription('buyer', 'tokens.100', 'txn-prod-1');
    await eventually('the verified pack credited', async () => (await wallet()).balance === 100, 20_000);
    const ledger = await database.db
      .selectFrom('ledger_entries')
      .select(['user_id', 'reference', 'amount'])
      .where('user_id', '=', 'buyer')
      .execute();
    expect(ledger).toEqual([{ user_id: 'buyer', reference: 'revenuecat:event:rc-prod-pack', amount: 100 }]);
  });
});

/** Each process refuses to start with a demo value or switch under NODE_ENV=production (exit 1, no value printed). */
describe('NODE_ENV=production refuses the demo values at start', () => {
  let database: TestDatabase;
  beforeAll(async () => {
    database = await createTestDatabase();
  });
  afterAll(() => database.drop());

  const cases: [string, 'ingest' | 'api' | 'worker', Record<string, string>, string][] = [
    [
      'the demo Stripe webhook secret',
      'ingest',
      { STRIPE_WEBHOOK_SECRETS: demo.stripeWebhookSecret },
      'STRIPE_WEBHOOK_SECRETS',
    ],
    [
      'the demo RevenueCat authorization',
      'ingest',
      { REVENUECAT_WEBHOOK_AUTH: demo.revenueCatAuth },
      'REVENUECAT_WEBHOOK_AUTH',
    ],
    ['the demo app key', 'api', { APP_API_KEYS: demo.appKey, ADMIN_API_KEYS: real.adminKey }, 'APP_API_KEYS'],
    ['the demo admin key', 'api', { APP_API_KEYS: real.appKey, ADMIN_API_KEYS: demo.adminKey }, 'ADMIN_API_KEYS'],
    [
      'packs credited from the body alone',
      'worker',
      { REVENUECAT_VERIFY_PURCHASES: 'false' },
      'REVENUECAT_VERIFY_PURCHASES',
    ],
    ['sandbox payments', 'worker', { PAYMENT_ENVIRONMENTS: 'production,sandbox' }, 'PAYMENT_ENVIRONMENTS'],
    [
      'half a Google Play push configuration',
      'ingest',
      {
        GOOGLE_PLAY_PACKAGE_NAME: 'com.example.app',
        GOOGLE_PUBSUB_AUDIENCE: 'https://billing.example.com/webhooks/google-play',
      },
      'GOOGLE_PUBSUB_SERVICE_ACCOUNT',
    ],
    [
      'half a Google Play API configuration',
      'worker',
      { GOOGLE_PLAY_PACKAGE_NAME: 'com.example.app' },
      'GOOGLE_SERVICE_ACCOUNT_KEY_PATH',
    ],
  ];
  it.each(cases)('refuses %s (%s)', async (_what, app, extra, variable) => {
    const child = new RunningProcess(app, {
      NODE_ENV: 'production',
      DATABASE_URL: database.url,
      REDIS_URL: testRedisUrl(),
      QUEUE_PREFIX: uniqueQueuePrefix(),
      INGEST_PORT: '0',
      API_PORT: '0',
      WORKER_METRICS_PORT: '0',
      ...extra,
    });
    const exit = await Promise.race([
      child.exited,
      new Promise<'still running'>((resolve) => setTimeout(() => resolve('still running'), 30_000)),
    ]);
    if (exit === 'still running') await child.stop();
    expect(exit).toEqual({ code: 1, signal: null });
    expect(child.output).toContain(`${app}: invalid configuration:`);
    expect(child.output).toContain(`  - ${variable}: `);
    for (const value of demoSecretValues) expect(child.output).not.toContain(value);
  });

  it('the same values start outside production (the local demo)', async () => {
    const child = new RunningProcess('ingest', {
      DATABASE_URL: database.url,
      REDIS_URL: testRedisUrl(),
      QUEUE_PREFIX: uniqueQueuePrefix(),
      INGEST_PORT: '0',
      STRIPE_WEBHOOK_SECRETS: demo.stripeWebhookSecret,
      REVENUECAT_WEBHOOK_AUTH: demo.revenueCatAuth,
    });
    await child.waitForLog('ingest listening');
    expect(await child.stop()).toEqual({ code: 0, signal: null });
  });
});
