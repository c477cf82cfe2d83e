import { verifyLedger } from '@tally/billing-core';
import { createTestDatabase, type TestDatabase, uniqueQueuePrefix } from '@tally/billing-core/testing';
import { sql } from 'kysely';
import { RunningProcess } from '../../support/built-process';
import { DisposableRedis } from '../../support/redis-server';
import { eventually, type Json } from '../../support/stack';

jest.setTimeout(180_000);

/**
 * Holds across crashes (docs/holds.md "Crashes"): the built api killed (SIGKILL) between a hold
 * and its capture, with one capture committed and not answered (the test holds its
 * Idempotency-Key's row, so the answer waits to be kept) and others waiting inside the hold
 * batcher's transactions (the test holds the wallet row) or in the batcher; and the built worker's expiry sweeper (role credit-expiry) killed in the middle of
 * a sweep (waiting on a lot row the test holds) with holds on the expiring lots. The faults are
 * the test's own, outside the processes. Afterwards: exactly one debit per captured hold, the
 * balance the sum of the lots' remaining, `ledger verify` clean, held and available right.
 */
describe('holds across an api or worker killed with SIGKILL', () => {
  const appKey = 'app_holds_crash_key';
  const adminKey = 'admin_holds_crash_key';
  let database: TestDatabase;
  let redis: DisposableRedis;
  const prefix = uniqueQueuePrefix();
  const running: RunningProcess[] = [];
  let seq = 0;

  beforeAll(async () => {
    database = await createTestDatabase();
    redis = await DisposableRedis.start();
  });
  afterEach(async () => {
    redis.resume();
    for (const process of running.splice(0)) {
      process.signal('SIGKILL');
      await process.exited;
    }
  });
  afterAll(async () => {
    await redis.stopServer();
    await database.drop();
  });

  const startApi = async () => {
    const api = new RunningProcess('api', {
      DATABASE_URL: database.url,
      REDIS_URL: redis.url,
      QUEUE_PREFIX: prefix,
      API_PORT: '0',
      APP_API_KEYS: appKey,
      ADMIN_API_KEYS: adminKey,
      // Messages (wallet.debited of a capture) are handed to Redis right after the commit, before the answer.
      APP_WEBHOOK_URL: 'http://127.0.0.1:9/never-delivered',
      APP_WEBHOOK_SECRETS: 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw',
      // A key whose attempt died is taken over after 1 s (the provider timeouts must be shorter).
      IDEMPOTENCY_KEY_LOCK_TIMEOUT_MS: '1000',
      STRIPE_TIMEOUT_MS: '500',
      REVENUECAT_API_TIMEOUT_MS: '500',
      LOG_LEVEL: 'info',
    });
    running.push(api);
    const { port } = await api.waitForLog('api listening');
    return { api, url: `http://127.0.0.1:${Number(port)}` };
  };
  const startSweeper = async () => {
    const worker = new RunningProcess('worker', {
      DATABASE_URL: database.url,
      REDIS_URL: redis.url,
      QUEUE_PREFIX: prefix,
      LOG_LEVEL: 'info',
      WORKER_METRICS_PORT: '0',
      WORKER_ROLES: 'credit-expiry',
      CREDIT_EXPIRY_INTERVAL_MS: '100',
      CREDIT_EXPIRY_BATCH_SIZE: '1',
    });
    running.push(worker);
    await worker.waitForLog('worker started');
    return worker;
  };

  const call = async (baseUrl: string, method: string, path: string, body?: Json, key?: string) => {
    const response = await fetch(`${baseUrl}${path}`, {
      method,
      headers: {
        authorization: `Bearer ${path.startsWith('/admin') ? adminKey : appKey}`,
        ...(body === undefined ? {} : { 'content-type': 'application/json' }),
        ...(key === undefined ? {} : { 'idempotency-key': key }),
      },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    });
    const text = await response.text();
    return { status: response.status, body: text === '' ? null : (JSON.parse(text) as Json) };
  };
  /** A request the test expects never to be answered (the process dies first). */
  const unanswered = (baseUrl: string, path: string, body: Json = {}, key?: string) =>
    call(baseUrl, 'POST', path, body, key).then(
      (answer) => ({ answered: answer.status }),
      (error: unknown) => ({ failed: String(error) }),
    );
  const newUser = () => `holds-crash-${++seq}-${Date.now().toString(36)}`;
  const grant = async (baseUrl: string, userId: string, amount: number, expiresAt?: string) => {
    const granted = await call(baseUrl, 'POST', `/v1/users/${userId}/grants`, {
      amount,
      reference: `seed-${amount}-${expiresAt ?? 'never'}`,
      ...(expiresAt ? { expiresAt } : {}),
    });
    expect(granted.status).toBe(201);
    return granted.body.lotId as number;
  };
  const hold = async (baseUrl: string, userId: string, amount: number, reference: string) => {
    const placed = await call(baseUrl, 'POST', `/v1/users/${userId}/holds`, {
      amount,
      reference,
      expiresInSeconds: 3600,
    });
    expect(placed.status).toBe(201);
    return placed.body.id as string;
  };
  const captures = async (userId: string) =>
    (
      await database.db
        .selectFrom('ledger_entries')
        .select(['reference', 'amount'])
        .where('user_id', '=', userId)
        .where('reference', 'like', 'hold:%')
        .orderBy('id')
        .execute()
    ).map((row) => [row.reference, Number(row.amount)]);
  const holdStatuses = async (userId: string) =>
    Object.fromEntries(
      (await database.db.selectFrom('holds').select(['id', 'status']).where('user_id', '=', userId).execute()).map(
        (row) => [row.id, row.status],
      ),
    );
  /** The balance and the sum of the lots' remaining, which every crash must leave equal. */
  const balances = async (userId: string) => {
    const { rows } = await sql<{ balance: number; remaining: number }>`
      SELECT (SELECT balance FROM wallets WHERE user_id = ${userId})::bigint AS balance,
             (SELECT coalesce(sum(remaining), 0) FROM credit_lots WHERE user_id = ${userId})::bigint AS remaining`.execute(
      database.db,
    );
    return { balance: Number(rows[0]?.balance), remaining: Number(rows[0]?.remaining) };
  };
  /** Backends of this test database waiting for a row lock (a request or a sweep blocked by the test's lock). */
  const lockWaiters = async () => {
    const { rows } = await sql<{ waiting: number }>`
      SELECT count(*)::int AS waiting FROM pg_stat_activity
       WHERE datname = current_database() AND wait_event_type = 'Lock'`.execute(database.db);
    return rows[0]?.waiting ?? 0;
  };

  it('api killed with a capture committed but unanswered and captures waiting in their transactions: the retries post exactly one debit per hold and answer the first capture', async () => {
    const first = await startApi();
    const userId = newUser();
    // other's capture commits while userId's captures wait for its wallet row (the test holds it).
    const other = newUser();
    await grant(first.url, userId, 100);
    await grant(first.url, other, 20);
    const ids: string[] = [];
    for (let i = 1; i <= 5; i += 1) ids.push(await hold(first.url, userId, 10, `llm-call-${i}`));
    const [h1, h3, h4, h5, h6] = ids as [string, string, string, string, string];
    const h2 = await hold(first.url, other, 10, 'llm-call-other');
    const capturePath = (user: string, id: string) => `/v1/users/${user}/holds/${id}/capture`;
    const h2Key = `capture-${h2}`;

    // h1: captured and answered before any fault.
    const answered = await call(first.url, 'POST', capturePath(userId, h1), {});
    expect(answered).toMatchObject({ status: 200, body: { id: h1, status: 'captured', captured: 10, balance: 90 } });

    // The test holds both wallets: every capture waits inside its transaction.
    const holderA = await database.db.startTransaction().execute();
    const holderB = await database.db.startTransaction().execute();
    const keyLocker = await database.db.startTransaction().execute();
    let lost: Promise<unknown>[] = [];
    try {
      await sql`SELECT 1 FROM wallets WHERE user_id = ${userId} FOR UPDATE`.execute(holderA);
      await sql`SELECT 1 FROM wallets WHERE user_id = ${other} FOR UPDATE`.execute(holderB);
      // The api's hold batcher keeps two transactions open (SPEND_BATCH_TRANSACTIONS): h2's, on
      // other (under an Idempotency-Key), goes first and waits for other's wallet row inside its
      // transaction; then userId's captures: h3, h4 (twice each), h5 for part of it and h1 again,
      // the first of them waiting inside the second transaction, the rest in the batcher.
      lost = [unanswered(first.url, capturePath(other, h2), {}, h2Key)];
      await eventually('the capture of h2 to wait for its wallet row', async () => (await lockWaiters()) >= 1);
      lost.push(
        unanswered(first.url, capturePath(userId, h3)),
        unanswered(first.url, capturePath(userId, h3)),
        unanswered(first.url, capturePath(userId, h4)),
        unanswered(first.url, capturePath(userId, h4)),
        unanswered(first.url, capturePath(userId, h5), { amount: 4 }),
        unanswered(first.url, capturePath(userId, h1)),
      );
      await eventually('a capture of userId to wait for its wallet row', async () => (await lockWaiters()) >= 2);
      // h2's key was claimed before its transaction: the test takes its row, so that once h2's
      // capture commits, the api waits to keep the answer under the key, and is killed there.
      const claimed = await sql`SELECT 1 FROM idempotency_keys WHERE idempotency_key = ${h2Key} FOR UPDATE`.execute(
        keyLocker,
      );
      expect(claimed.rows).toHaveLength(1);
      await holderB.rollback().execute();
      // h2 commits; its transaction's place goes to the captures that waited in the batcher, which
      // share one transaction that waits for userId's wallet row too.
      await eventually(
        'h2 captured, its answer waiting for the key row, and the waiting captures in a shared transaction',
        async () => (await captures(other)).length === 1 && (await lockWaiters()) >= 3,
      );
      first.api.signal('SIGKILL');
      expect((await first.api.exited).signal).toBe('SIGKILL');
    } finally {
      await keyLocker.rollback().execute();
      await holderA.rollback().execute();
      if (!holderB.isCommitted && !holderB.isRolledBack) await holderB.rollback().execute();
    }
    for (const answer of await Promise.all(lost)) expect(answer).toEqual({ failed: expect.any(String) });

    // What committed stays, what was in flight left nothing: only h1's and h2's debits.
    expect(await captures(userId)).toEqual([[`hold:${h1}:capture`, -10]]);
    expect(await captures(other)).toEqual([[`hold:${h2}:capture`, -10]]);
    expect(await holdStatuses(userId)).toEqual({
      [h1]: 'captured',
      [h3]: 'held',
      [h4]: 'held',
      [h5]: 'held',
      [h6]: 'held',
    });
    expect(await holdStatuses(other)).toEqual({ [h2]: 'captured' });
    expect(await balances(userId)).toEqual({ balance: 90, remaining: 90 });
    expect(await balances(other)).toEqual({ balance: 10, remaining: 10 });

    const second = await startApi();
    // The held tokens are still reserved: 4 open holds of 10.
    expect((await call(second.url, 'GET', `/v1/users/${userId}/wallet`)).body).toMatchObject({
      balance: 90,
      held: 40,
      available: 50,
    });
    // The app retries every capture, concurrently and twice, and releases h6.
    const targets: [string, string][] = [
      [userId, h1],
      [other, h2],
      [userId, h3],
      [userId, h4],
      [userId, h5],
    ];
    const retried = await Promise.all(
      [...targets, ...targets].map(([user, id]) =>
        call(second.url, 'POST', capturePath(user, id), id === h5 ? { amount: 4 } : {}).then((answer) => ({
          id,
          answer,
        })),
      ),
    );
    // h2 retried under its key: the answer kept before the kill, or (the key still leased by the
    // dead attempt: 409 until its lease lapses) the capture run again, which finds it captured.
    const keyed = await eventually('the retry of h2 under its key to be answered', async () => {
      const answer = await call(second.url, 'POST', capturePath(other, h2), {}, h2Key);
      return answer.status === 409 && answer.body.error?.code === 'idempotency_key_in_use' ? undefined : answer;
    });
    expect(keyed).toEqual({ status: 200, body: retried.find((r) => r.id === h2)?.answer.body });
    const release = await call(second.url, 'POST', `/v1/users/${userId}/holds/${h6}/release`);
    expect(release).toMatchObject({ status: 200, body: { id: h6, status: 'released' } });
    for (const { answer } of retried) expect(answer.status).toBe(200);
    for (const [, id] of targets) {
      const answers = retried.filter((r) => r.id === id).map((r) => JSON.stringify(r.answer.body));
      expect(new Set(answers).size).toBe(1);
    }
    expect(retried.find((r) => r.id === h1)?.answer.body).toEqual(answered.body);
    expect(retried.find((r) => r.id === h2)?.answer.body).toMatchObject({ id: h2, captured: 10, balance: 10 });
    expect(retried.find((r) => r.id === h5)?.answer.body).toMatchObject({ captured: 4, released: 6 });

    expect((await captures(userId)).sort()).toEqual(
      [
        [`hold:${h1}:capture`, -10],
        [`hold:${h3}:capture`, -10],
        [`hold:${h4}:capture`, -10],
        [`hold:${h5}:capture`, -4],
      ].sort(),
    );
    expect(await captures(other)).toEqual([[`hold:${h2}:capture`, -10]]);
    expect(await balances(userId)).toEqual({ balance: 66, remaining: 66 });
    expect(await balances(other)).toEqual({ balance: 10, remaining: 10 });
    expect((await call(second.url, 'GET', `/v1/users/${userId}/wallet`)).body).toMatchObject({
      balance: 66,
      held: 0,
      available: 66,
    });
    expect(await verifyLedger(database.db)).toMatchObject({ ok: true, discrepancies: [] });
    expect((await call(second.url, 'GET', '/admin/ledger/verify')).body).toMatchObject({ ok: true });
  });

  it('the expiry sweeper killed mid-sweep with holds on the expiring lots: each lot expires once, held tokens survive, and expire after their release', async () => {
    const api = await startApi();
    const soon = (ms: number) => new Date(Date.now() + ms).toISOString();
    const done = newUser();
    const waiting = newUser();
    // done's lot expires first, so the sweep (one wallet per pass) takes it first.
    const doneLot = await grant(api.url, done, 50, soon(1500));
    const waitingLot = await grant(api.url, waiting, 40, soon(2500));
    await grant(api.url, waiting, 5);
    const doneHold = await hold(api.url, done, 20, 'long-job');
    const waitingHold = await hold(api.url, waiting, 15, 'long-job');
    await eventually(
      'the database clock past both lots',
      async () =>
        (
          await sql<{ due: number }>`SELECT count(*)::int AS due FROM credit_lots
            WHERE id IN (${doneLot}, ${waitingLot}) AND expires_at <= now()`.execute(database.db)
        ).rows[0]?.due === 2,
    );
    const expiries = async (userId: string) =>
      (
        await database.db
          .selectFrom('ledger_entries')
          .select(['reference', 'amount'])
          .where('user_id', '=', userId)
          .where('reason', '=', 'credits_expired')
          .orderBy('id')
          .execute()
      ).map((row) => [row.reference, Number(row.amount)]);

    const holder = await database.db.startTransaction().execute();
    try {
      // The sweep claims waiting's wallet, then waits for this lot row inside its transaction.
      await sql`SELECT 1 FROM credit_lots WHERE id = ${waitingLot} FOR UPDATE`.execute(holder);
      const sweeper = await startSweeper();
      await eventually('done expired and the sweep waiting on the lot of waiting', async () => {
        return (await expiries(done)).length === 1 && (await lockWaiters()) >= 1;
      });
      sweeper.signal('SIGKILL');
      expect((await sweeper.exited).signal).toBe('SIGKILL');
    } finally {
      await holder.rollback().execute();
    }
    // done's pass committed (only the unheld 30 expired); waiting's died with the process.
    expect(await expiries(done)).toEqual([[`lot:${doneLot}:expired`, -30]]);
    expect(await expiries(waiting)).toEqual([]);
    expect(await balances(done)).toEqual({ balance: 20, remaining: 20 });
    expect(await balances(waiting)).toEqual({ balance: 45, remaining: 45 });

    await startSweeper();
    await eventually('the restarted sweeper to expire the lot of waiting', async () => {
      return (await expiries(waiting)).length === 1;
    });
    expect(await expiries(waiting)).toEqual([[`lot:${waitingLot}:expired`, -25]]);
    expect(await expiries(done)).toEqual([[`lot:${doneLot}:expired`, -30]]);
    // The held parts survived: both holds are whole, and captured or released as the app decides.
    expect((await call(api.url, 'GET', `/v1/users/${done}/wallet`)).body).toMatchObject({
      balance: 20,
      held: 20,
      available: 0,
    });
    expect((await call(api.url, 'GET', `/v1/users/${waiting}/wallet`)).body).toMatchObject({
      balance: 20,
      held: 15,
      available: 5,
    });
    const captured = await call(api.url, 'POST', `/v1/users/${done}/holds/${doneHold}/capture`, { amount: 20 });
    expect(captured).toMatchObject({ status: 200, body: { captured: 20, balance: 0 } });
    expect(await call(api.url, 'POST', `/v1/users/${waiting}/holds/${waitingHold}/release`)).toMatchObject({
      status: 200,
      body: { status: 'released', available: 20 },
    });
    // Released, the held 15 of the expired lot expire at the next sweep (the lot's second expiry).
    await eventually('the released tokens of the expired lot to expire', async () => {
      return (await expiries(waiting)).length === 2;
    });
    expect(await expiries(waiting)).toEqual([
      [`lot:${waitingLot}:expired`, -25],
      [`lot:${waitingLot}:expired:2`, -15],
    ]);
    expect(await balances(waiting)).toEqual({ balance: 5, remaining: 5 });
    expect(await balances(done)).toEqual({ balance: 0, remaining: 0 });
    expect(await verifyLedger(database.db)).toMatchObject({ ok: true, discrepancies: [] });
  });
});
