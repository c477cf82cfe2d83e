import {
  appWebhookSource,
  createAiStudioClient,
  createAppWebhookSender,
  inUnitOfWork,
  plainLots,
  postLedgerEntry,
  toWebhookId,
} from '@tally/billing-core';
import { createCommittedRowsHandOff, createLogger, createProducerQueue, createRedisConnection } from '@tally/platform';
import type { WorkerRuntime } from '../../../apps/worker/src/worker-runtime';
import { AppWebhookReceiver, newWebhookSecret } from '../../support/fakes/app-webhook-receiver';
import { FakeAiStudio } from '../../support/fakes/fake-ai-studio';
import { freePort } from '../../support/ports';
import { eventually, readJson, signStripe, TestStack } from '../../support/stack';
import { stripeEventBody, stripeId, stripePackIntent, stripeRefundedCharge } from '../../support/stripe-events';

/** A relay pass every hour: within a test, only the pass at the worker's start ever runs. */
const HOUR_MS = 3_600_000;
const API_THRESHOLD = 90;
const WORKER_THRESHOLD = 50;

/**
 * New app webhook messages are handed to the app-webhooks queue right after the commit of their
 * change, by the process that made it (the api, each worker role), instead of waiting for the
 * relay's pass (RELAY_INTERVAL_MS). Here the relay never passes after the messages are written,
 * so a message that arrives can only have been handed off by its writer.
 */
describe('outbound app webhooks: handed to the queue right after the commit, not at the next relay pass', () => {
  let stack: TestStack;
  let receiver: AppWebhookReceiver;
  let ai: FakeAiStudio;
  let worker: WorkerRuntime;
  const secrets = [newWebhookSecret()];

  beforeAll(async () => {
    receiver = await AppWebhookReceiver.start(secrets);
    ai = await FakeAiStudio.start();
    stack = await TestStack.start({
      // The api as with APP_WEBHOOK_URL set, and its own WALLET_LOW_BALANCE_THRESHOLD.
      appWebhookHandOff: true,
      lowBalanceThreshold: API_THRESHOLD,
      ports: { aiStudio: createAiStudioClient({ baseUrl: ai.url, apiKey: ai.apiKey, timeoutMs: 2_000 }) },
    });
    worker = stack.startWorker({
      roles: ['inbox', 'relay', 'studio', 'app-webhooks'],
      relay: { intervalMs: HOUR_MS, staleAfterMs: HOUR_MS, processingStaleAfterMs: HOUR_MS, batchSize: 100 },
      appWebhooks: {
        sender: createAppWebhookSender({ url: receiver.url, secrets, timeoutMs: 2_000 }),
        retryScheduleMs: [100],
        concurrency: 4,
        retentionDays: 30,
        // Another process, another setting: the threshold is the worker's own, not the api's.
        lowBalanceThreshold: WORKER_THRESHOLD,
      },
    });
    // The relay's pass at start is over before anything is written; the next is an hour away.
    await worker.loops.relay?.runOnce();
  });
  afterAll(async () => {
    await stack?.stop();
    await receiver?.stop();
    await ai?.stop();
  });

  const messagesOf = (userId: string) =>
    stack.db.selectFrom('app_webhook_messages').selectAll().where('user_id', '=', userId).orderBy('id').execute();

  it('delivers the messages of the worker and the api once each, in order, with no relay pass', async () => {
    const userId = `awh-handoff-${Date.now().toString(36)}`;
    const paymentIntent = stripeId('pi');

    // The worker's inbox role credits a token pack (0 → 100).
    const pack = stripeEventBody(
      'payment_intent.succeeded',
      stripePackIntent({ id: paymentIntent, userId, customer: stripeId('cus') }),
    );
    expect((await stack.postStripe(pack, signStripe(pack))).status).toBe(200);
    await stack.finishedInboxRow('stripe', JSON.parse(pack).id);

    // The api debits a paid track (after the two free clips of the day): 100 → 85 crosses the
    // api's threshold; the worker's studio role settles the three generations.
    stack.clock.set('2031-05-01T10:00:00Z');
    for (const body of [
      { kind: 'music', durationSeconds: 10, input: { prompt: 'one' } },
      { kind: 'music', durationSeconds: 10, input: { prompt: 'two' } },
      { kind: 'music', full: true, input: { prompt: 'three' } },
    ]) {
      const response = await stack.apiRequest(`/v1/users/${userId}/studio/requests`, { method: 'POST', body });
      expect({ status: response.status, json: await readJson(response) }).toMatchObject({ status: 202 });
      await eventually('the generation to complete', async () => {
        const rows = await stack.db
          .selectFrom('studio_requests')
          .select('status')
          .where('user_id', '=', userId)
          .execute();
        return rows.every((row) => row.status === 'completed');
      });
    }

    // The worker takes the refunded pack back (85 → 0): that crosses the worker's threshold, and
    // the 15 it could not take are the wallet's debt (wallet.debt_changed, docs/debt.md).
    const refund = stripeEventBody('charge.refunded', stripeRefundedCharge({ id: stripeId('ch'), paymentIntent }));
    expect((await stack.postStripe(refund, signStripe(refund))).status).toBe(200);
    await stack.finishedInboxRow('stripe', JSON.parse(refund).id);

    const expected = [
      'wallet.credited',
      'studio.request.completed',
      'studio.request.completed',
      'wallet.debited',
      'wallet.balance_low',
      'studio.request.completed',
      'wallet.debited',
      'wallet.balance_low',
      'wallet.debt_changed',
    ];
    const rows = await eventually(
      'every message to be delivered without a relay pass',
      async () => {
        const all = await messagesOf(userId);
        if (all.length === expected.length && all.every((row) => row.status === 'delivered')) return all;
        // Not yet: the timeout's message then says where each message stood.
        throw new Error(all.map((row) => `${row.id} ${row.type} ${row.status} attempts ${row.attempts}`).join('; '));
      },
      20_000,
    );
    expect(rows.map((row) => row.type)).toEqual(expected);
    // Each written handed off (stamped when written, so the relay leaves it alone), sent once, in order.
    expect(rows.every((row) => row.enqueued_at !== null && row.attempts === 1)).toBe(true);
    const accepted = receiver.accepted.filter((delivery) => delivery.body.data.userId === userId);
    expect(accepted.map((delivery) => delivery.webhookId)).toEqual(rows.map((row) => toWebhookId(row.message_id)));
    // Each process wrote with its own threshold: the api's debit crossed 90, the worker's crossed 50.
    expect(
      accepted.filter((delivery) => delivery.body.type === 'wallet.balance_low').map((delivery) => delivery.body.data),
    ).toEqual([
      { userId, balance: 85, threshold: API_THRESHOLD },
      { userId, balance: 0, threshold: WORKER_THRESHOLD },
    ]);
  });

  it('a hand-off that fails releases its messages to the relay, which delivers them', async () => {
    const userId = `awh-release-${Date.now().toString(36)}`;
    // A process whose Redis is unreachable: its hand-off after the commit fails at once.
    const deadRedis = createRedisConnection(`redis://127.0.0.1:${await freePort()}`, 'producer');
    const queue = createProducerQueue(deadRedis, stack.prefix, appWebhookSource.queue);
    const handOff = createCommittedRowsHandOff({
      queue,
      source: appWebhookSource,
      db: stack.db,
      logger: createLogger({ name: 'test', level: 'silent' }),
    });
    try {
      await inUnitOfWork(
        { db: stack.db, outbox: { lowBalanceThreshold: undefined, handOff: handOff.handOff } },
        (uow) =>
          postLedgerEntry(uow, {
            userId,
            reference: `test:awh:${userId}`,
            amount: 3,
            reason: 'test_grant',
            lots: plainLots(3),
          }),
      );
      await handOff.drain();
    } finally {
      await queue.close().catch(() => undefined);
      deadRedis.disconnect();
    }
    // Released: pending and never handed off, so the next relay pass takes it at once.
    const [released] = await messagesOf(userId);
    expect(released).toMatchObject({ status: 'pending', enqueued_at: null, attempts: 0 });

    await worker.loops.relay?.runOnce();
    const [delivered] = await eventually('the released message to be delivered', async () => {
      const rows = await messagesOf(userId);
      return rows[0]?.status === 'delivered' ? rows : undefined;
    });
    expect(
      receiver.accepted.filter((delivery) => delivery.body.data.userId === userId).map((d) => d.webhookId),
    ).toEqual([toWebhookId(delivered?.message_id ?? '')]);
  });
});
