import {
  IDEMPOTENCY_KEY_LOCK_NAMESPACE,
  inUnitOfWork,
  lockStudioUser,
  plainLots,
  postLedgerEntry,
} from '@tally/billing-core';
import { createTestDatabase, type TestDatabase, testOutbox, uniqueQueuePrefix } from '@tally/billing-core/testing';
import { sql } from 'kysely';
import { RunningProcess } from '../../support/built-process';
import { DisposableRedis } from '../../support/redis-server';
import { eventually, type Json } from '../../support/stack';

/**
 * The built api process killed (SIGKILL) at the two instants a retry must survive: after the
 * studio request's transaction committed and before the answer was written, and inside that
 * transaction before it committed. The faults are the test's own, outside the api, and no hook
 * in it: its Redis is frozen (SIGSTOP), so the hand-off to the studio queue, which follows the
 * commit and precedes the answer, waits out its enqueue timeout (2 s); the test watches the
 * database for the committed key meanwhile and kills the process as soon as it sees it (and
 * checks the answer never came). For the second instant the test holds the user's studio lock, so
 * the request waits inside its transaction until the process is killed; a studio POST claims
 * nothing before its transaction, so that leaves no key, only the dead transaction Postgres ends.
 */
describe('Idempotency-Key across an api crash: the retry replays what committed and runs what did not', () => {
  const appKey = 'app_crash_key';
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
    for (const api of running.splice(0)) {
      api.signal('SIGKILL');
      await api.exited;
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
      ADMIN_API_KEYS: 'admin_crash_key',
      LOG_LEVEL: 'info',
    });
    running.push(api);
    const { port } = await api.waitForLog('api listening');
    return { api, url: `http://127.0.0.1:${Number(port)}` };
  };

  const post = (baseUrl: string, path: string, body: unknown, key?: string) =>
    fetch(`${baseUrl}${path}`, {
      method: 'POST',
      headers: {
        authorization: `Bearer ${appKey}`,
        'content-type': 'application/json',
        ...(key === undefined ? {} : { 'idempotency-key': key }),
      },
      body: JSON.stringify(body),
    });

  const fullSong = { kind: 'music', durationSeconds: 120, full: true, input: { prompt: 'crash' } };
  const studioPath = (userId: string) => `/v1/users/${userId}/studio/requests`;

  /** A user with 40 tokens whose free music allowance of the day is spent (so a full song is paid). */
  const payingUser = async (baseUrl: string) => {
    const userId = `crash-user-${++seq}-${Date.now().toString(36)}`;
    for (let i = 0; i < 2; i += 1) {
      const free = await post(baseUrl, studioPath(userId), { kind: 'music', durationSeconds: 5, input: { i } });
      expect(free.status).toBe(202);
    }
    await inUnitOfWork({ db: database.db, outbox: testOutbox }, (uow) =>
      postLedgerEntry(uow, {
        userId,
        reference: `test:grant:${userId}`,
        amount: 40,
        reason: 'test_grant',
        lots: plainLots(40),
      }),
    );
    return userId;
  };

  const paidState = async (userId: string) => ({
    requests: await database.db
      .selectFrom('studio_requests')
      .select('public_id')
      .where('user_id', '=', userId)
      .where('free_tier', '=', false)
      .execute(),
    debits: await database.db
      .selectFrom('ledger_entries')
      .select(['reference', 'amount'])
      .where('user_id', '=', userId)
      .where('amount', '<', 0)
      .execute(),
    balance: (
      await database.db.selectFrom('wallets').select('balance').where('user_id', '=', userId).executeTakeFirst()
    )?.balance,
  });

  const keyRow = (userId: string, key: string) =>
    database.db
      .selectFrom('idempotency_keys')
      .selectAll()
      .where('user_id', '=', userId)
      .where('idempotency_key', '=', key)
      .executeTakeFirst();

  it('killed after the commit and before the answer: the retry replays the committed answer and charges nothing more', async () => {
    const first = await startApi();
    const userId = await payingUser(first.url);
    const key = `crash-after-commit-${seq}`;

    redis.pause();
    const lost = post(first.url, studioPath(userId), fullSong, key).then(
      (response) => ({ answered: response.status }),
      (error: unknown) => ({ failed: String(error) }),
    );
    // Killed as soon as the request's debit is committed (polled tighter than `eventually` does:
    // the kill must land within the hand-off's 2 s). Watching the debit, not the key, is what
    // makes this test see a key finished anywhere but in the debit's own transaction.
    await (async () => {
      const deadline = Date.now() + 15_000;
      while (Date.now() < deadline) {
        if ((await paidState(userId)).debits.length > 0) return;
        await new Promise((resolve) => setTimeout(resolve, 5));
      }
      throw new Error(`the request never committed:\n${first.api.tail()}`);
    })();
    first.api.signal('SIGKILL');
    expect((await first.api.exited).signal).toBe('SIGKILL');
    // The answer was kept by the transaction that debited.
    const committed = await keyRow(userId, key);
    expect(committed?.recovery_point).toBe('finished');
    if (!committed) throw new Error('no key row');
    // The process died before answering: the app saw a failed call, and retries.
    expect(await lost).toEqual({ failed: expect.any(String) });
    redis.resume();

    const stored = JSON.parse(String(committed.response_body)) as Json;
    expect(stored).toEqual({ id: expect.any(String), status: 'received', tokensCharged: 15, freeTier: false });
    expect(await paidState(userId)).toEqual({
      requests: [{ public_id: stored.id }],
      debits: [{ reference: `studio:${stored.id}:debit`, amount: -15 }],
      balance: 25,
    });

    const second = await startApi();
    const retry = await post(second.url, studioPath(userId), fullSong, key);
    expect({
      status: retry.status,
      replayed: retry.headers.get('idempotent-replayed'),
      body: await retry.json(),
    }).toEqual({ status: 202, replayed: 'true', body: stored });
    expect(await paidState(userId)).toEqual({
      requests: [{ public_id: stored.id }],
      debits: [{ reference: `studio:${stored.id}:debit`, amount: -15 }],
      balance: 25,
    });
  });

  it('killed inside the transaction, before it committed: nothing of it is kept, the key is busy only while Postgres still runs the dead transaction, then the retry runs the request once', async () => {
    const first = await startApi();
    const userId = await payingUser(first.url);
    const key = `crash-before-commit-${seq}`;
    /** Advisory locks of this test database taken on an idempotency key (held by a running attempt). */
    const keyLocks = async () => {
      const { rows } = await sql<{ held: number }>`
        SELECT count(*)::int AS held FROM pg_locks l JOIN pg_database d ON d.oid = l.database
         WHERE d.datname = current_database() AND l.locktype = 'advisory' AND l.granted
           AND l.classid = ${IDEMPOTENCY_KEY_LOCK_NAMESPACE}`.execute(database.db);
      return rows[0]?.held ?? 0;
    };

    const holder = await database.db.startTransaction().execute();
    let second: Awaited<ReturnType<typeof startApi>>;
    try {
      await lockStudioUser(holder, userId);
      const lost = post(first.url, studioPath(userId), fullSong, key).then(
        (response) => ({ answered: response.status }),
        (error: unknown) => ({ failed: String(error) }),
      );
      await eventually('the request to take its key and wait inside its transaction', async () => {
        const { rows } = await sql<{ waiting: number }>`
          SELECT count(*)::int AS waiting FROM pg_locks l JOIN pg_database d ON d.oid = l.database
           WHERE d.datname = current_database() AND l.locktype = 'advisory' AND NOT l.granted`.execute(database.db);
        return (rows[0]?.waiting ?? 0) === 1 && (await keyLocks()) === 1;
      });
      first.api.signal('SIGKILL');
      await first.api.exited;
      expect(await lost).toEqual({ failed: expect.any(String) });
      // Nothing was claimed before the transaction: no key row, only the dead transaction's lock.
      expect(await keyRow(userId, key)).toBeUndefined();
      // Its backend still waits on the studio lock, holding the key: a retry now is 409.
      second = await startApi();
      const busy = await post(second.url, studioPath(userId), fullSong, key);
      expect({ status: busy.status, body: await busy.json() }).toMatchObject({
        status: 409,
        body: { error: { code: 'idempotency_key_in_use' } },
      });
    } finally {
      await holder.rollback().execute();
    }
    // Postgres ends the dead transaction (its client is gone) and releases the key, with nothing written.
    await eventually('the dead transaction to end', async () => (await keyLocks()) === 0);
    expect(await keyRow(userId, key)).toBeUndefined();
    expect((await paidState(userId)).requests).toEqual([]);

    const resumed = await post(second.url, studioPath(userId), fullSong, key);
    const body = (await resumed.json()) as Json;
    expect({ status: resumed.status, replayed: resumed.headers.get('idempotent-replayed'), body }).toEqual({
      status: 202,
      replayed: null,
      body: { id: expect.any(String), status: 'received', tokensCharged: 15, freeTier: false },
    });
    expect(await paidState(userId)).toEqual({
      requests: [{ public_id: body.id }],
      debits: [{ reference: `studio:${body.id}:debit`, amount: -15 }],
      balance: 25,
    });
  });
});
