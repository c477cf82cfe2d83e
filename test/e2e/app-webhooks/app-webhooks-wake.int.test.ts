import { appWebhookSource, createAppWebhookSender } from '@tally/billing-core';
import { testRedisUrl } from '@tally/billing-core/testing';
import { createLogger, createProducerQueue, createRedisConnection, enqueueJob } from '@tally/platform';
import type { Redis } from 'ioredis';
import type { KyselyPlugin } from 'kysely';
import { createWorkerMetrics } from '../../../apps/worker/src/metrics/worker-metrics';
import { createAppWebhookWorker } from '../../../apps/worker/src/processors/app-webhook-processor';
import { AppWebhookReceiver, newWebhookSecret } from '../../support/fakes/app-webhook-receiver';
import { RunOnceAfter } from '../../support/run-once-after';
import { eventually, TestStack } from '../../support/stack';

/**
 * A blocked message waits delayed until its predecessor finishes, whose worker then promotes it.
 * When the predecessor finishes while the blocked message's job is still running (between the
 * claim that found it blocked and the job being parked), that promote finds no delayed job. The
 * blocked message must not then wait out its whole delay.
 */
describe('outbound app webhooks: a predecessor finishing while its successor is being parked', () => {
  let stack: TestStack;
  let receiver: AppWebhookReceiver;
  let connection: Redis;
  let producer: Redis;
  let worker: ReturnType<typeof createAppWebhookWorker> | undefined;
  const secrets = [newWebhookSecret()];

  beforeAll(async () => {
    receiver = await AppWebhookReceiver.start(secrets);
    stack = await TestStack.start();
    connection = createRedisConnection(testRedisUrl(), 'worker');
    producer = createRedisConnection(testRedisUrl(), 'producer');
  });
  afterAll(async () => {
    await worker?.close(true);
    connection?.disconnect();
    producer?.disconnect();
    await stack?.stop();
    await receiver?.stop();
  });

  /** One app webhook worker whose database handle carries `plugin`; returns its producer queue. */
  const startWorker = (plugin: KyselyPlugin) => {
    const queue = createProducerQueue(producer, stack.prefix, appWebhookSource.queue);
    worker = createAppWebhookWorker(
      {
        db: stack.db.withPlugin(plugin),
        sender: createAppWebhookSender({ url: receiver.url, secrets, timeoutMs: 2_000 }),
        retryScheduleMs: [60_000],
        processingStaleAfterMs: 60_000,
        queue,
        logger: createLogger({ name: 'test', level: 'silent' }),
        metrics: createWorkerMetrics(['appWebhooks']),
      },
      { connection, prefix: stack.prefix, concurrency: 2, lockDurationMs: 5_000 },
    );
    return queue;
  };

  /** Two messages of a new user; the first waits out a retry a minute away. */
  const twoMessagesFirstWaiting = async (label: string) => {
    const userId = `awh-${label}-${Date.now().toString(36)}`;
    for (const n of [1, 2]) {
      await stack.postPlainEntry({
        userId,
        reference: `test:awh-${label}:${userId}:${n}`,
        amount: 5,
        reason: 'test_grant',
      });
    }
    const [first, second] = await stack.db
      .selectFrom('app_webhook_messages')
      .select(['id'])
      .where('user_id', '=', userId)
      .orderBy('id')
      .execute();
    const firstId = Number(first?.id);
    await stack.db
      .updateTable('app_webhook_messages')
      .set({ status: 'pending', attempts: 1, next_attempt_at: new Date(Date.now() + 60_000) })
      .where('id', '=', firstId)
      .execute();
    return { firstId, secondId: Number(second?.id) };
  };

  const deliverFirstBehindTheWorker = (firstId: number) => () =>
    stack.db
      .updateTable('app_webhook_messages')
      .set({ status: 'delivered', delivered_at: new Date(), next_attempt_at: null })
      .where('id', '=', firstId)
      .execute()
      .then(() => undefined);

  const deliveredRow = (id: number) =>
    eventually(
      `message ${id} to be delivered`,
      async () => {
        const row = await stack.db
          .selectFrom('app_webhook_messages')
          .select(['status', 'attempts'])
          .where('id', '=', id)
          .executeTakeFirst();
        return row?.status === 'delivered' ? row : undefined;
      },
      15_000,
    );

  afterEach(async () => {
    await worker?.close(true);
    worker = undefined;
    receiver.deliveries.length = 0;
  });

  it('the successor is delivered at once, not after its delay', async () => {
    // The second message, blocked behind the first, is parked for the first's minute plus the recheck.
    const { firstId, secondId } = await twoMessagesFirstWaiting('wake');
    // Right after the second's claim found it blocked (the reason's read), the first is delivered
    // by "another worker", whose wake-up of the second finds its job active (running here) and
    // does nothing.
    const queue = startWorker(
      new RunOnceAfter({ sqlContains: 'LEFT JOIN LATERAL' }, deliverFirstBehindTheWorker(firstId)),
    );
    await enqueueJob(queue, { appWebhookMessageId: secondId }, { replaceFinished: true });
    expect(await deliveredRow(secondId)).toEqual({ status: 'delivered', attempts: 1 });
    expect(receiver.deliveries).toHaveLength(1);
    await queue.close();
  });

  it('a predecessor delivered between the failed claim and the reason: the successor is claimed again, not dropped', async () => {
    const { firstId, secondId } = await twoMessagesFirstWaiting('reclaim');
    // The first is delivered right after the second's claim failed, before the reason is read:
    // the reason then finds nothing blocking, and the other worker's wake-up found this job
    // active. Ending the job as "not claimed" would leave the second pending, stamped as handed
    // off, until the relay's stale pass (an hour in production); it must be claimed again.
    const queue = startWorker(
      new RunOnceAfter({ sqlContains: 'attempts = m.attempts + 1' }, deliverFirstBehindTheWorker(firstId)),
    );
    await enqueueJob(queue, { appWebhookMessageId: secondId }, { replaceFinished: true });
    expect(await deliveredRow(secondId)).toEqual({ status: 'delivered', attempts: 1 });
    expect(receiver.deliveries).toHaveLength(1);
    await queue.close();
  });
});
