import { type DB, toStripeInboxDraftFromBody } from '@tally/billing-core';
import { createTestDatabase, type TestDatabase } from '@tally/billing-core/testing';
import {
  createDb,
  createLogger,
  createRedisConnection,
  isDatabaseUnavailableError,
  QUERY_READ_TIMEOUT_MESSAGE,
  waitUntilReady,
} from '@tally/platform';
import { sql } from 'kysely';
import { createInboxBatcher } from '../../../apps/ingest/src/inbox-batcher';
import { stripeTokenPackPayment } from '../../support/events';
import { DisposableRedis } from '../../support/redis-server';
import { defaultIngestBatching } from '../../support/stack';

// The waits a silent network path (a partition: nothing answered, nothing closed) would stretch
// forever, each ended by its own timeout (docs/configuration.md#timeouts). Here the silence is a
// statement that does not finish (pg_sleep, a table lock) and a frozen Redis (SIGSTOP); the chaos
// suite's partition scenarios cut real links (docs/reliability.md).

const silent = createLogger({ name: 'test', level: 'silent' });

describe('silent paths end in a timeout, never a hang', () => {
  let database: TestDatabase;
  beforeAll(async () => {
    database = await createTestDatabase();
  });
  afterAll(() => database.drop());

  it('a statement past DATABASE_QUERY_TIMEOUT_MS fails as "database unavailable" and its connection is never reused', async () => {
    const timed = createDb<DB>({ connectionString: database.url, maxConnections: 1, queryTimeoutMs: 300 });
    try {
      const { rows: before } = await sql<{ pid: number }>`SELECT pg_backend_pid() AS pid`.execute(timed.db);
      const started = Date.now();
      const error = await sql`SELECT pg_sleep(5)`.execute(timed.db).then(
        () => undefined,
        (failure: unknown) => failure,
      );
      expect(error).toBeInstanceOf(Error);
      expect((error as Error).message).toBe(QUERY_READ_TIMEOUT_MESSAGE);
      expect(isDatabaseUnavailableError(error)).toBe(true);
      expect(Date.now() - started).toBeLessThan(3_000);
      // The next statement runs on a new connection (a new backend), at once.
      const { rows: after } = await sql<{ pid: number }>`SELECT pg_backend_pid() AS pid`.execute(timed.db);
      expect(after[0]?.pid).not.toBe(before[0]?.pid);
    } finally {
      await timed.close();
    }
  }, 15_000);

  it('ingest answers unavailable past INGEST_ANSWER_DEADLINE_MS while its insert waits, and the retry is a duplicate once it committed', async () => {
    const db = createDb<DB>({ connectionString: database.url, maxConnections: 4 });
    const locker = createDb<DB>({ connectionString: database.url, maxConnections: 1 });
    let release: () => void = () => undefined;
    const released = new Promise<void>((resolve) => {
      release = resolve;
    });
    let locked: () => void = () => undefined;
    const holding = new Promise<void>((resolve) => {
      locked = resolve;
    });
    const lock = locker.db.transaction().execute(async (trx) => {
      await sql`LOCK TABLE inbox_events IN ACCESS EXCLUSIVE MODE`.execute(trx);
      locked();
      await released;
    });
    try {
      await holding;
      const batcher = createInboxBatcher({
        ...defaultIngestBatching,
        db: db.db,
        enqueueMany: async () => undefined,
        logger: silent,
        answerDeadlineMs: 300,
      });
      const draft = toStripeInboxDraftFromBody(stripeTokenPackPayment({ eventId: 'evt_deadline_1' }));
      const started = Date.now();
      expect(await batcher.accept(draft)).toEqual({ kind: 'unavailable' });
      expect(Date.now() - started).toBeLessThan(2_000);
      // The insert was sent: it commits once the lock goes, and the provider's retry is a duplicate.
      release();
      await lock;
      await batcher.drain();
      expect(await batcher.accept(draft)).toMatchObject({ kind: 'duplicate' });
    } finally {
      release();
      await lock.catch(() => undefined);
      await db.close();
      await locker.close();
    }
  }, 15_000);

  it('a producer Redis command past REDIS_COMMAND_TIMEOUT_MS fails instead of waiting on a frozen Redis', async () => {
    const redis = await DisposableRedis.start();
    const producer = createRedisConnection(redis.url, 'producer', { commandTimeoutMs: 300 });
    try {
      expect(await waitUntilReady(producer, 5_000)).toBe(true);
      redis.pause();
      const started = Date.now();
      // Without the timeout the ping would wait for as long as Redis stays frozen: 3 s tells.
      let guard: NodeJS.Timeout | undefined;
      const error = await Promise.race([
        producer.ping().then(
          () => undefined,
          (failure: unknown) => failure,
        ),
        new Promise((resolve) => {
          guard = setTimeout(() => resolve('still waiting after 3 s'), 3_000);
        }),
      ]);
      clearTimeout(guard);
      expect(String(error)).toMatch(/Command timed out/);
      expect(Date.now() - started).toBeLessThan(2_000);
      redis.resume();
      expect(await producer.ping()).toBe('PONG');
    } finally {
      redis.resume();
      producer.disconnect();
      await redis.stopServer();
    }
  }, 15_000);
});
