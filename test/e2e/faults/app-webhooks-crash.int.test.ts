import { createAppWebhookSender, toWebhookId } from '@tally/billing-core';
import { testRedisUrl } from '@tally/billing-core/testing';
import { RunningProcess } from '../../support/built-process';
import { AppWebhookReceiver, newWebhookSecret } from '../../support/fakes/app-webhook-receiver';
import { eventually, TestStack } from '../../support/stack';
import { untilAppWebhookMessage } from '../../support/waits';

/**
 * A real worker process (the built one) killed with SIGKILL while its delivery waits for the
 * app's answer: the message stays `processing` with one attempt spent, and a live worker
 * delivers it again under the same webhook-id once the dead worker's job lock expires.
 */
describe('outbound app webhooks: a worker killed mid-delivery', () => {
  let stack: TestStack;
  let receiver: AppWebhookReceiver;
  let dying: RunningProcess | undefined;
  const secrets = [newWebhookSecret()];

  beforeAll(async () => {
    receiver = await AppWebhookReceiver.start(secrets);
    stack = await TestStack.start();
  });
  afterAll(async () => {
    dying?.signal('SIGKILL');
    await dying?.exited;
    await stack?.stop();
    await receiver?.stop();
  });

  it('delivers the message again under the same webhook-id after the worker died waiting for the answer', async () => {
    const userId = `awh-crash-${Date.now().toString(36)}`;
    await stack.postPlainEntry({ userId, reference: `test:awh:${userId}`, amount: 9, reason: 'test_grant' });
    receiver.answers.push({ kind: 'hang' });

    dying = new RunningProcess('worker', {
      DATABASE_URL: stack.database.url,
      REDIS_URL: testRedisUrl(),
      QUEUE_PREFIX: stack.prefix,
      LOG_LEVEL: 'info',
      WORKER_METRICS_PORT: '0',
      WORKER_ROLES: 'relay,app-webhooks',
      RELAY_INTERVAL_MS: '100',
      WORKER_LOCK_DURATION_MS: '1000',
      APP_WEBHOOK_URL: receiver.url,
      APP_WEBHOOK_SECRETS: secrets.join(','),
      APP_WEBHOOK_TIMEOUT_MS: '30000',
    });
    await dying.waitForLog('worker started');
    await eventually('the dying worker to be waiting for the answer', async () => receiver.deliveries.length === 1);
    dying.signal('SIGKILL');
    expect(await dying.exited).toEqual({ code: null, signal: 'SIGKILL' });
    const [stuck] = await stack.db
      .selectFrom('app_webhook_messages')
      .selectAll()
      .where('user_id', '=', userId)
      .execute();
    expect(stuck).toMatchObject({ status: 'processing', attempts: 1 });

    // A live worker (same lock setting) takes the dead worker's job back through BullMQ's stalled
    // check and claims the message once it has been processing for the processing window.
    stack.startWorker({
      roles: ['app-webhooks', 'relay'],
      lockDurationMs: 1_000,
      relay: { intervalMs: 200, staleAfterMs: 60_000, processingStaleAfterMs: 1_000, batchSize: 100 },
      appWebhooks: {
        sender: createAppWebhookSender({ url: receiver.url, secrets, timeoutMs: 2_000 }),
        retryScheduleMs: [100],
        concurrency: 2,
        retentionDays: 30,
      },
    });
    const delivered = await untilAppWebhookMessage(
      stack.db,
      userId,
      'delivered',
      'the message to be delivered by the live worker',
      20_000,
    );
    expect(delivered).toMatchObject({ attempts: 2, last_status_code: 204, last_error: null });
    const webhookId = toWebhookId(delivered.message_id);
    expect(receiver.deliveries.map((delivery) => [delivery.webhookId, delivery.answeredWith])).toEqual([
      [webhookId, undefined],
      [webhookId, 204],
    ]);
  });
});
