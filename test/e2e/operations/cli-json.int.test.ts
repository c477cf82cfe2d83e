import { parseRevenueCatWebhook, recordInboxEvent, toRevenueCatInboxDraft } from '@tally/billing-core';
import { createTestDatabase, type TestDatabase, testRedisUrl, uniqueQueuePrefix } from '@tally/billing-core/testing';
import { sql } from 'kysely';
import { runCli } from '../../support/built-process';
import { revenueCatTokenPurchase } from '../../support/events';
import { FakeStripe, fakeStripeSecretKey } from '../../support/fakes/fake-stripe';
import { freePort } from '../../support/ports';
import { removeTestQueue } from '../../support/remove-test-queue';
import { stripeEventBody, stripeId, stripePackIntent } from '../../support/stripe-events';

// Every test starts several CLI processes (about 1 s each on an idle machine, far more under load).
jest.setTimeout(180_000);

describe('the tally CLI: --json output parses, exit codes are 0 ok, 1 failure or discrepancy, 2 usage', () => {
  let database: TestDatabase;
  let fake: FakeStripe;
  const prefix = uniqueQueuePrefix();
  let env: Record<string, string>;
  let processedId: number;
  let parkedId: number;

  const record = async (id: string, status: 'processed' | 'failed') => {
    const body = revenueCatTokenPurchase({ id, userId: 'cli-json-user' });
    const recorded = await recordInboxEvent(database.db, toRevenueCatInboxDraft(parseRevenueCatWebhook(body), body));
    if (recorded.kind !== 'recorded') throw new Error('already recorded');
    await database.db
      .updateTable('inbox_events')
      .set({ status, attempts: 1, outcome_code: status === 'processed' ? 'credited' : 'invalid_event' })
      .where('id', '=', recorded.inboxEventId)
      .execute();
    return recorded.inboxEventId;
  };

  beforeAll(async () => {
    database = await createTestDatabase();
    fake = await FakeStripe.start();
    env = {
      DATABASE_URL: database.url,
      REDIS_URL: testRedisUrl(),
      QUEUE_PREFIX: prefix,
      STRIPE_SECRET_KEY: fakeStripeSecretKey,
      STRIPE_API_BASE_URL: fake.baseUrl,
    };
    processedId = await record('cli-json-processed', 'processed');
    parkedId = await record('cli-json-parked', 'failed');
  });
  afterAll(async () => {
    await removeTestQueue(prefix);
    await fake.stop();
    await database.drop();
  });

  const json = async (args: string[], expectedCode: number) => {
    const result = await runCli(args, env);
    expect({ args, code: result.code, stderr: expectedCode === 0 ? result.stderr : '(ignored)' }).toEqual({
      args,
      code: expectedCode,
      stderr: expectedCode === 0 ? '' : '(ignored)',
    });
    return JSON.parse(result.stdout);
  };

  it('events list, events show, user, hold release and ledger verify print JSON (exit 0; a refused release 1)', async () => {
    const list = await json(['events', 'list', '--json'], 0);
    expect(list.events.map((event: { id: number }) => event.id)).toEqual([parkedId, processedId]);
    expect(list.events[0]).toMatchObject({ status: 'failed', source: 'webhook', provider: 'revenuecat' });
    const shown = await json(['events', 'show', String(processedId), '--json'], 0);
    expect(shown).toMatchObject({ id: processedId, status: 'processed', raw_body: expect.any(String) });
    const user = await json(['user', 'cli-json-user', '--json'], 0);
    expect(user).toMatchObject({
      userId: 'cli-json-user',
      events: { total: 2 },
      wallet: { balance: 0, held: 0, available: 0 },
      holds: { activeTotal: 0, items: [] },
    });
    // A release of a hold that is not the user's exits 1 with the JSON error (hold-surfaces.int releases real ones).
    expect(await json(['hold', 'release', 'cli-json-user', 'hold_000000000000000000000000', '--json'], 1)).toEqual({
      error: { code: 'not_found', message: 'no hold hold_000000000000000000000000 for this user' },
    });
    expect(await json(['ledger', 'verify', '--json'], 0)).toMatchObject({ ok: true, discrepancies: [] });
  });

  it('events list --outcome lists only the events with that outcome code, alone or with other filters', async () => {
    const list = async (...filters: string[]) =>
      (await json(['events', 'list', ...filters, '--json'], 0)).events as { id: number }[];
    expect(await list('--outcome', 'invalid_event')).toEqual([
      expect.objectContaining({ id: parkedId, status: 'failed', outcome_code: 'invalid_event' }),
    ]);
    expect((await list('--outcome', 'credited')).map((event) => event.id)).toEqual([processedId]);
    expect((await list('--outcome', 'credited', '--status', 'failed')).map((event) => event.id)).toEqual([]);
    expect((await list('--outcome', 'other_environment')).map((event) => event.id)).toEqual([]);
  });

  it('requeue and replay print what they did as JSON; a refused one exits 1 with a JSON error', async () => {
    expect(await json(['requeue', String(parkedId), '--json'], 0)).toMatchObject({ requeued: 1, ids: [parkedId] });
    expect(await json(['replay', String(processedId), '--json'], 0)).toMatchObject({
      replayed: 1,
      ids: [processedId],
    });
    // Both rows are `received` now: neither can be requeued or replayed again.
    expect(await json(['requeue', String(processedId), '--json'], 1)).toEqual({
      error: { code: 'not_parked', message: expect.stringContaining(`inbox event ${processedId}`) },
    });
    expect(await json(['replay', String(parkedId), '--json'], 1)).toMatchObject({ error: { code: 'not_finished' } });
    expect(await json(['events', 'show', '999999', '--json'], 1)).toMatchObject({ error: { code: 'not_found' } });
  });

  it('reconcile --json reports and backfills (exit 1 when something was found), then exits 0', async () => {
    const paymentIntentId = stripeId('pi');
    const body = stripeEventBody(
      'payment_intent.succeeded',
      stripePackIntent({ id: paymentIntentId, userId: 'cli-json-user', customer: stripeId('cus') }),
    );
    const eventId = JSON.parse(body).id as string;
    fake.putEvent(JSON.parse(body));
    const dryRun = await json(['reconcile', '--dry-run', '--json'], 1);
    expect(dryRun.missingEvents).toEqual([expect.objectContaining({ eventId, result: 'would_ingest' })]);
    const first = await json(['reconcile', '--days', '2', '--json'], 1);
    expect(first).toMatchObject({ ok: false, windowDays: 2, missingEvents: [{ eventId, result: 'ingested' }] });
    const row = await database.db
      .selectFrom('inbox_events')
      .select(['source', 'status'])
      .where('provider_event_id', '=', eventId)
      .executeTakeFirstOrThrow();
    expect(row).toEqual({ source: 'backfill', status: 'received' });
    expect(await json(['reconcile', '--json'], 0)).toMatchObject({ ok: true, missingEvents: [] });
  }, 60_000);

  it('ledger verify exits 1 and names a tampered wallet (guard disabled in this test database)', async () => {
    await database.db.insertInto('users').values({ id: 'cli-tampered' }).execute();
    await database.db.insertInto('wallets').values({ user_id: 'cli-tampered' }).execute();
    await sql`ALTER TABLE wallets DISABLE TRIGGER wallets_guard_balance_trg`.execute(database.db);
    await sql`UPDATE wallets SET balance = 7 WHERE user_id = 'cli-tampered'`.execute(database.db);
    await sql`ALTER TABLE wallets ENABLE TRIGGER wallets_guard_balance_trg`.execute(database.db);
    const report = await json(['ledger', 'verify', '--json'], 1);
    expect(report).toMatchObject({
      ok: false,
      discrepancies: [
        { userId: 'cli-tampered', problem: 'balance_differs_from_sum' },
        { userId: 'cli-tampered', problem: 'lots_differ_from_balance', detail: 'wallet holds 7, its lots hold 0' },
      ],
    });
    const text = await runCli(['ledger', 'verify'], env);
    expect(text.code).toBe(1);
    expect(text.stdout).toContain('DISCREPANCIES');
    expect(text.stdout).toMatch(
      /USER\s+PROBLEM\s+DETAIL\ncli-tampered\s+balance_differs_from_sum\s+wallet holds 7, entries sum to 0/,
    );
  });

  it('ledger open-lots gives a balance posted without lots (an old replica) its opening lot, and verify then passes for it', async () => {
    const userId = 'cli-old-replica';
    await database.db.insertInto('users').values({ id: userId }).execute();
    await database.db.insertInto('wallets').values({ user_id: userId }).execute();
    // What a replica of the release before lots writes: a ledger entry and no lot.
    await sql`INSERT INTO ledger_entries (user_id, reference, amount, balance_before, balance_after, reason)
              SELECT user_id, 'test:old-replica:1', 30, balance, balance + 30, 'old_code'
                FROM wallets WHERE user_id = ${userId}`.execute(database.db);
    const problemsOf = (report: { discrepancies: { userId: string; problem: string }[] }) =>
      report.discrepancies.filter((found) => found.userId === userId).map((found) => found.problem);
    expect(problemsOf(await json(['ledger', 'verify', '--json'], 1))).toEqual(['lots_differ_from_balance']);
    const opened = await json(['ledger', 'open-lots', '--batch-size', '1', '--json'], 0);
    expect(opened.opened).toBeGreaterThanOrEqual(1);
    expect(opened.batches).toBe(opened.opened);
    const lots = await database.db
      .selectFrom('credit_lots')
      .select(['category', 'source', 'amount', 'remaining', 'expires_at'])
      .where('user_id', '=', userId)
      .execute();
    expect(lots).toEqual([
      { category: 'purchased', source: `lot:opening:${userId}`, amount: 30, remaining: 30, expires_at: null },
    ]);
    const after = await runCli(['ledger', 'verify', '--json'], env);
    expect(problemsOf(JSON.parse(after.stdout))).toEqual([]);
    // Nothing left to open: a second run opens nothing.
    expect(await json(['ledger', 'open-lots', '--json'], 0)).toEqual({ opened: 0, batches: 0 });
  });

  it('names Postgres, its URL without the password and the cause when it cannot be reached; --json prints the error', async () => {
    const port = await freePort();
    const deadDatabase = `postgres://tally:s3cret-pw@127.0.0.1:${port}/tally?password=s3cret-pw`;
    const expected = `cannot reach Postgres at postgres://tally@127.0.0.1:${port}/tally: ECONNREFUSED (check DATABASE_URL)`;
    for (const args of [
      ['events', 'list', '--json'],
      ['events', 'show', '1', '--json'],
      ['user', 'someone', '--json'],
      ['hold', 'release', 'someone', 'hold_000000000000000000000000', '--json'],
      ['ledger', 'verify', '--json'],
      ['requeue', '1', '--json'],
      ['replay', '1', '--json'],
    ]) {
      const result = await runCli(args, { ...env, DATABASE_URL: deadDatabase });
      expect({ args, code: result.code, stderr: result.stderr, stdout: JSON.parse(result.stdout || 'null') }).toEqual({
        args,
        code: 1,
        stderr: `tally: ${expected}\n`,
        stdout: { error: { code: 'postgres_unreachable', message: expected } },
      });
    }
    // An environment that does not parse is a failure too, with its own code.
    const { DATABASE_URL: _omitted, ...withoutDatabase } = env;
    const unconfigured = await runCli(['events', 'list', '--json'], withoutDatabase);
    expect(unconfigured.code).toBe(1);
    expect(JSON.parse(unconfigured.stdout)).toEqual({
      error: { code: 'invalid_configuration', message: expect.stringContaining('DATABASE_URL: is required') },
    });
    // Without --json: the same line on stderr, nothing on stdout.
    const result = await runCli(['events', 'list'], { ...env, DATABASE_URL: deadDatabase });
    expect(result).toEqual({ code: 1, stdout: '', stderr: `tally: ${expected}\n` });
    // migrate connects to DATABASE_MIGRATION_URL (default DATABASE_URL) and says so.
    const migrateExpected = expected.replace(
      '(check DATABASE_URL)',
      '(check DATABASE_MIGRATION_URL (default DATABASE_URL))',
    );
    for (const migrateEnv of [
      { ...env, DATABASE_URL: deadDatabase },
      { ...env, DATABASE_MIGRATION_URL: deadDatabase },
    ]) {
      const migrated = await runCli(['migrate'], migrateEnv);
      expect(migrated).toEqual({ code: 1, stdout: '', stderr: `tally: ${migrateExpected}\n` });
    }
  });

  it('names Redis when a requeue cannot reach it (the row is left to the relay, exit 0), and the Stripe API when reconcile cannot', async () => {
    const parked = await record('cli-json-redis-down', 'failed');
    const redisPort = await freePort();
    const requeued = await runCli(['requeue', String(parked), '--json'], {
      ...env,
      REDIS_URL: `redis://default:s3cret-pw@127.0.0.1:${redisPort}`,
    });
    expect({ code: requeued.code, stdout: JSON.parse(requeued.stdout), stderr: requeued.stderr }).toEqual({
      code: 0,
      stdout: { requeued: 1, ids: [parked], enqueued: 0, deferred: 1 },
      stderr: `tally: cannot reach Redis at redis://default@127.0.0.1:${redisPort}: ECONNREFUSED; the relay will enqueue 1 event(s)\n`,
    });
    const row = await database.db
      .selectFrom('inbox_events')
      .select(['status', 'enqueued_at'])
      .where('id', '=', parked)
      .executeTakeFirstOrThrow();
    expect(row).toEqual({ status: 'received', enqueued_at: null });

    const stripePort = await freePort();
    const reconciled = await runCli(['reconcile', '--json'], {
      ...env,
      STRIPE_API_BASE_URL: `http://127.0.0.1:${stripePort}`,
    });
    const message = `cannot reach the Stripe API at http://127.0.0.1:${stripePort}: ECONNREFUSED`;
    expect({ code: reconciled.code, stdout: JSON.parse(reconciled.stdout), stderr: reconciled.stderr }).toEqual({
      code: 1,
      stdout: { error: { code: 'stripe_unreachable', message } },
      stderr: `tally: ${message}\n`,
    });
  });

  it.each([
    [['no-such-command']],
    [['events', 'list', '--no-such-option']],
    [['requeue', 'abc']],
    [['reconcile', '--days', '31']],
    [['events', 'show']],
  ])('usage error %j exits 2', async (args) => {
    const result = await runCli(args, env);
    expect(result.code).toBe(2);
    expect(result.stderr).not.toBe('');
  });

  it('--help exits 0', async () => {
    const result = await runCli(['--help'], env);
    expect(result.code).toBe(0);
    expect(result.stdout).toContain('reconcile');
  });
});
