import {
  type InboxJob,
  inboxJobId,
  inboxRelaySource,
  parseRevenueCatWebhook,
  recordInboxEvent,
  toRevenueCatInboxDraft,
} from '@tally/billing-core';
import { createTestDatabase, type TestDatabase, testRedisUrl, uniqueQueuePrefix } from '@tally/billing-core/testing';
import { createProducerQueue, createRedisConnection, type ProducerQueue } from '@tally/platform';
import type { Redis } from 'ioredis';
import { runCli } from '../../support/built-process';
import { revenueCatTokenPurchase } from '../../support/events';
import { freePort } from '../../support/ports';
import { revenueCatSubscriptionEvent } from '../../support/revenuecat-events';
import { revenueCatAuth } from '../../support/stack';

async function recordEvent(database: TestDatabase, id: string, status: 'processed' | 'failed'): Promise<number> {
  const body = revenueCatTokenPurchase({ id, userId: 'cli-user' });
  const recorded = await recordInboxEvent(database.db, toRevenueCatInboxDraft(parseRevenueCatWebhook(body), body));
  if (recorded.kind !== 'recorded') throw new Error(`event ${id} was already recorded`);
  await database.db
    .updateTable('inbox_events')
    .set({ status, attempts: 15, last_error: status === 'failed' ? 'Error: boom' : null })
    .where('id', '=', recorded.inboxEventId)
    .execute();
  return recorded.inboxEventId;
}

/** A port nothing listens on: bound, then released. */
describe('the tally CLI', () => {
  let database: TestDatabase;
  let redis: Redis;
  let queue: ProducerQueue<InboxJob>;
  const prefix = uniqueQueuePrefix();
  let env: Record<string, string>;

  beforeAll(async () => {
    database = await createTestDatabase();
    redis = createRedisConnection(testRedisUrl(), 'producer');
    queue = createProducerQueue(redis, prefix, inboxRelaySource.queue);
    env = { DATABASE_URL: database.url, REDIS_URL: testRedisUrl(), QUEUE_PREFIX: prefix };
  });
  afterAll(async () => {
    await queue.obliterate({ force: true }).catch(() => undefined);
    await queue.close();
    redis.disconnect();
    await database.drop();
  });

  it('exits 1 with only a readable message when asked to requeue an event that is not parked, 20 times in a row', async () => {
    const id = await recordEvent(database, 'cli-processed-1', 'processed');
    const expected = {
      code: 1,
      stdout: '',
      stderr: `inbox event ${id} is not parked (or does not exist); nothing requeued\n`,
    };
    // Five at a time: the crash this guards against (closing a Redis connection while it was
    // still connecting) showed up when processes competed for the CPU.
    for (let round = 0; round < 4; round++) {
      const results = await Promise.all(Array.from({ length: 5 }, () => runCli(['requeue', String(id)], env)));
      expect(results).toEqual(Array.from({ length: 5 }, () => expected));
    }
    const row = await database.db
      .selectFrom('inbox_events')
      .select(['status', 'attempts'])
      .where('id', '=', id)
      .executeTakeFirstOrThrow();
    expect(row).toEqual({ status: 'processed', attempts: 15 });
    // About 13 s on an idle machine (each CLI run loads the whole platform); margin for a loaded one.
  }, 180_000);

  it('requeues a parked event: resets it and hands it to the queue', async () => {
    const id = await recordEvent(database, 'cli-parked-1', 'failed');
    const result = await runCli(['requeue', String(id)], env);
    expect(result).toEqual({ code: 0, stdout: `requeued ${id}\n`, stderr: '' });
    const row = await database.db
      .selectFrom('inbox_events')
      .select(['status', 'attempts', 'last_error'])
      .where('id', '=', id)
      .executeTakeFirstOrThrow();
    expect(row).toEqual({ status: 'received', attempts: 0, last_error: null });
    const job = await queue.getJob(inboxJobId(id));
    expect(job?.data).toEqual({ inboxEventId: id });
  });

  it('replay --outcome replays the oldest matching events up to --limit; repeated, it replays the rest, then 0', async () => {
    // As the pre-sync build left subscription events: ignored, awaiting_subscription_sync.
    const ignoredAwaitingSync = async (id: string) => {
      const body = revenueCatSubscriptionEvent({ id, userId: 'cli-replay-user' });
      const recorded = await recordInboxEvent(database.db, toRevenueCatInboxDraft(parseRevenueCatWebhook(body), body));
      if (recorded.kind !== 'recorded') throw new Error(`event ${id} was already recorded`);
      await database.db
        .updateTable('inbox_events')
        .set({ status: 'ignored', attempts: 1, outcome_code: 'awaiting_subscription_sync' })
        .where('id', '=', recorded.inboxEventId)
        .execute();
      return recorded.inboxEventId;
    };
    const ids = [
      await ignoredAwaitingSync('cli-replay-1'),
      await ignoredAwaitingSync('cli-replay-2'),
      await ignoredAwaitingSync('cli-replay-3'),
    ];
    const other = await recordEvent(database, 'cli-replay-other', 'processed');
    const replay = (...extra: string[]) => runCli(['replay', '--outcome', 'awaiting_subscription_sync', ...extra], env);

    expect(await replay('--limit', '2')).toEqual({
      code: 0,
      stdout: `replayed 2 event(s): ${ids[0]} ${ids[1]}\n`,
      stderr: '',
    });
    expect(await replay()).toEqual({ code: 0, stdout: `replayed 1 event(s): ${ids[2]}\n`, stderr: '' });
    expect(await replay()).toEqual({ code: 0, stdout: 'replayed 0 events\n', stderr: '' });

    const rows = await database.db
      .selectFrom('inbox_events')
      .select(['id', 'status', 'attempts', 'replays', 'outcome_code'])
      .where('id', 'in', [...ids, other])
      .orderBy('id')
      .execute();
    expect(rows).toEqual([
      // Received again (the last outcome stays until the worker writes a new one): no longer
      // finished, so a repeated replay does not pick them up twice.
      ...ids.map((id) => ({
        id,
        status: 'received',
        attempts: 0,
        replays: 1,
        outcome_code: 'awaiting_subscription_sync',
      })),
      { id: other, status: 'processed', attempts: 15, replays: 0, outcome_code: null },
    ]);
    for (const id of ids) expect((await queue.getJob(inboxJobId(id)))?.data).toEqual({ inboxEventId: id });
    expect(await queue.getJob(inboxJobId(other))).toBeUndefined();
  }, 180_000);

  it('send-sample says which ingest it cannot reach, why, and what to do, when nothing listens there', async () => {
    const port = await freePort();
    const result = await runCli(['send-sample', 'revenuecat'], {
      INGEST_PORT: String(port),
      REVENUECAT_WEBHOOK_AUTH: revenueCatAuth,
    });
    expect(result).toEqual({
      code: 1,
      stdout: '',
      stderr: `tally: cannot reach ingest at http://127.0.0.1:${port}: ECONNREFUSED (is the stack running? npm start)\n`,
    });
  });
});
