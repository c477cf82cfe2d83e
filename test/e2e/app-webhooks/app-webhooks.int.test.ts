import {
  createAiStudioClient,
  createAppWebhookSender,
  createRevenueCatApiClient,
  createStripeApi,
  pruneAppWebhookMessages,
  toWebhookId,
} from '@tally/billing-core';
import { testRedisUrl } from '@tally/billing-core/testing';
import { Redis } from 'ioredis';
import { sql } from 'kysely';
import { walletMessageViolations } from '../../support/app-webhook-invariants';
import { AppWebhookReceiver, newWebhookSecret } from '../../support/fakes/app-webhook-receiver';
import { FakeAiStudio } from '../../support/fakes/fake-ai-studio';
import { daysFromNow, FakeRevenueCat, fakeRevenueCatApiKey } from '../../support/fakes/fake-revenuecat';
import { FakeStripe } from '../../support/fakes/fake-stripe';
import { revenueCatSubscriptionEvent } from '../../support/revenuecat-events';
import { eventually, type Json, readJson, signStripe, TestStack, type WorkerSettings } from '../../support/stack';
import { stripeEventBody, stripeId, stripePackIntent } from '../../support/stripe-events';

/** Short waits so a test sees the whole schedule: three retries, then `failed`. */
const SHORT_SCHEDULE_MS = [100, 150, 200];
const LOW_BALANCE_THRESHOLD = 90;

describe('outbound app webhooks: one signed message per change, at least once, in per-user order', () => {
  let stack: TestStack;
  let receiver: AppWebhookReceiver;
  let ai: FakeAiStudio;
  let revenueCat: FakeRevenueCat;
  let stripe: FakeStripe;
  const secrets = [newWebhookSecret(), newWebhookSecret()];
  let userSeq = 0;
  const newUser = (what: string) => `awh-${what}-${++userSeq}-${Date.now().toString(36)}`;

  beforeAll(async () => {
    receiver = await AppWebhookReceiver.start(secrets);
    ai = await FakeAiStudio.start();
    revenueCat = await FakeRevenueCat.start();
    stripe = await FakeStripe.start();
    stack = await TestStack.start({
      // WALLET_LOW_BALANCE_THRESHOLD of the api and the workers, as their composition roots pass it.
      lowBalanceThreshold: LOW_BALANCE_THRESHOLD,
      ports: {
        aiStudio: createAiStudioClient({ baseUrl: ai.url, apiKey: ai.apiKey, timeoutMs: 2_000 }),
        revenueCat: createRevenueCatApiClient({
          apiKey: fakeRevenueCatApiKey,
          baseUrl: revenueCat.baseUrl,
          timeoutMs: 2_000,
        }),
        stripe: createStripeApi({ secretKey: 'sk_test_fake', apiBaseUrl: stripe.baseUrl, timeoutMs: 5_000 }),
      },
    });
  });
  afterAll(async () => {
    await stack?.stop();
    await receiver?.stop();
    await ai?.stop();
    await revenueCat?.stop();
    await stripe?.stop();
  });
  afterEach(async () => {
    await stack.stopWorkers();
    receiver.answers.length = 0;
    receiver.defaultAnswer = { kind: 'status', status: 204 };
  });

  /** A worker delivering to the receiver, with the relay every 100 ms. */
  const deliveringWorker = (overrides: Partial<WorkerSettings> & { timeoutMs?: number } = {}) =>
    stack.startWorker({
      roles: ['inbox', 'relay', 'studio', 'app-webhooks'],
      relay: { intervalMs: 100, staleAfterMs: 60_000, processingStaleAfterMs: 60_000, batchSize: 100 },
      appWebhooks: {
        sender: createAppWebhookSender({ url: receiver.url, secrets, timeoutMs: overrides.timeoutMs ?? 2_000 }),
        retryScheduleMs: SHORT_SCHEDULE_MS,
        concurrency: 4,
        retentionDays: 30,
      },
      ...overrides,
    });

  const messagesOf = (userId: string) =>
    stack.db.selectFrom('app_webhook_messages').selectAll().where('user_id', '=', userId).orderBy('id').execute();

  const allFinished = (userId: string, count: number) =>
    eventually(
      `${count} messages of ${userId} to be delivered or failed`,
      async () => {
        const rows = await messagesOf(userId);
        return rows.length === count && rows.every((row) => row.status === 'delivered' || row.status === 'failed')
          ? rows
          : undefined;
      },
      20_000,
    );

  const acceptedFor = (userId: string) => receiver.accepted.filter((delivery) => delivery.body.data.userId === userId);

  // Written as the stack's api writes (no hand-off in this file: the relay hands these off).
  const grant = (userId: string, amount: number, tag: string) =>
    stack.postPlainEntry({ userId, reference: `test:awh:${userId}:${tag}`, amount, reason: 'test_grant' });

  const studioRequest = async (userId: string, body: Json) => {
    const response = await stack.apiRequest(`/v1/users/${userId}/studio/requests`, { method: 'POST', body });
    const json = await readJson(response);
    expect({ status: response.status, json }).toMatchObject({ status: 202 });
    return eventually(`studio request ${json.id} to settle`, async () => {
      const row = await stack.db
        .selectFrom('studio_requests')
        .selectAll()
        .where('public_id', '=', json.id)
        .executeTakeFirst();
      return row && (row.status === 'completed' || row.status === 'failed') ? row : undefined;
    });
  };

  it('announces every change once, each type, signed by every secret, in the order of the changes', async () => {
    deliveringWorker();
    const userId = newUser('all-types');

    // A token pack paid on Stripe: wallet.credited (0 → 100).
    const pack = stripeEventBody(
      'payment_intent.succeeded',
      stripePackIntent({ id: stripeId('pi'), userId, customer: stripeId('cus') }),
    );
    expect((await stack.postStripe(pack, signStripe(pack))).status).toBe(200);
    await stack.finishedInboxRow('stripe', JSON.parse(pack).id);

    // A RevenueCat subscription: subscription.updated.
    revenueCat.setSubscriber(userId, { 'premium.monthly': { expires_date: daysFromNow(30), store: 'app_store' } });
    const subscribed = revenueCatSubscriptionEvent({ userId });
    expect((await stack.postRevenueCat(subscribed)).status).toBe(200);
    await stack.finishedInboxRow('revenuecat', JSON.parse(subscribed).event.id);

    // Two free music clips (no ledger entry), then a paid full track: wallet.debited 100 → 85,
    // which crosses the threshold (wallet.balance_low), then a failing one: debit, refund, failed.
    const free1 = await studioRequest(userId, { kind: 'music', durationSeconds: 10, input: { prompt: 'one' } });
    const free2 = await studioRequest(userId, { kind: 'music', durationSeconds: 10, input: { prompt: 'two' } });
    const paid = await studioRequest(userId, { kind: 'music', full: true, input: { prompt: 'three' } });
    const failing = await studioRequest(userId, { kind: 'music', full: true, input: { fake: 'fail' } });
    expect([free1.tokens_charged, free2.tokens_charged, paid.tokens_charged, failing.status]).toEqual([
      0,
      0,
      15,
      'failed',
    ]);

    const rows = await allFinished(userId, 10);
    const expected = [
      'wallet.credited',
      'subscription.updated',
      'studio.request.completed',
      'studio.request.completed',
      'wallet.debited',
      'wallet.balance_low',
      'studio.request.completed',
      'wallet.debited',
      'wallet.credited',
      'studio.request.failed',
    ];
    expect(rows.map((row) => [row.type, row.status])).toEqual(expected.map((type) => [type, 'delivered']));
    // Delivered once each, in the order written, under each message's own webhook-id.
    const accepted = acceptedFor(userId);
    expect(accepted.map((delivery) => delivery.webhookId)).toEqual(rows.map((row) => toWebhookId(row.message_id)));
    expect(accepted.map((delivery) => delivery.body.type)).toEqual(expected);
    // Every delivery carried one v1 signature per secret (space-separated), and the receiver verified
    // it with each secret on its own; nothing failed verification.
    expect(receiver.rejected).toEqual([]);
    for (const delivery of accepted) {
      expect(delivery.signature.split(' ')).toEqual([expect.stringMatching(/^v1,/), expect.stringMatching(/^v1,/)]);
    }

    // The bodies say what changed, matching the ledger and the subscription the API shows.
    const ledger = await stack.db
      .selectFrom('ledger_entries')
      .selectAll()
      .where('user_id', '=', userId)
      .orderBy('id')
      .execute();
    const walletBodies = accepted.filter((d) => d.body.type === 'wallet.credited' || d.body.type === 'wallet.debited');
    expect(walletBodies.map((d) => d.body.data)).toEqual(
      ledger.map((entry) => ({
        userId,
        reference: entry.reference,
        amount: entry.amount,
        balanceBefore: entry.balance_before,
        balanceAfter: entry.balance_after,
        reason: entry.reason,
        createdAt: entry.created_at.toISOString(),
      })),
    );
    expect(ledger.map((entry) => entry.amount)).toEqual([100, -15, -15, 15]);
    const byType = (type: string) => accepted.filter((d) => d.body.type === type).map((d) => d.body);
    expect(byType('wallet.balance_low')).toEqual([
      {
        type: 'wallet.balance_low',
        timestamp: ledger[1]?.created_at.toISOString(),
        data: { userId, balance: 85, threshold: 90 },
      },
    ]);
    const subscription = await readJson(await stack.apiRequest(`/v1/users/${userId}/subscription`));
    expect(byType('subscription.updated').map((body) => body.data)).toEqual([subscription]);
    expect(byType('studio.request.failed').map((body) => body.data)).toEqual([
      {
        userId,
        id: failing.public_id,
        kind: 'music',
        status: 'failed',
        tokensCharged: 15,
        refunded: true,
        error: { code: expect.any(String), message: expect.any(String) },
      },
    ]);
    expect(byType('studio.request.completed').map((body) => body.data)).toEqual(
      [free1, free2, paid].map((request) => ({
        userId,
        id: request.public_id,
        kind: 'music',
        status: 'completed',
        tokensCharged: request.tokens_charged,
        refunded: false,
        error: null,
      })),
    );
    for (const delivery of accepted) expect(Date.parse(delivery.body.timestamp)).not.toBeNaN();

    // Changes that change nothing send nothing: an on-demand sync that finds the same
    // subscription, the same RevenueCat event again, and a replay of the paid pack.
    const sync = await stack.apiRequest(`/v1/users/${userId}/subscription/sync`, { method: 'POST' });
    expect(await readJson(sync)).toMatchObject({ result: 'already_synchronized' });
    const resent = revenueCatSubscriptionEvent({ userId });
    expect((await stack.postRevenueCat(resent)).status).toBe(200);
    expect(await stack.finishedInboxRow('revenuecat', JSON.parse(resent).event.id)).toMatchObject({
      outcome_code: 'already_synchronized',
    });
    const [packRow] = await stack.inboxRows('stripe', JSON.parse(pack).id);
    const replay = await stack.apiRequest(`/admin/events/${packRow?.id}/replay`, { method: 'POST' });
    expect(replay.status).toBe(200);
    await eventually('the replay to finish', async () => {
      const [row] = await stack.inboxRows('stripe', JSON.parse(pack).id);
      return row?.status === 'processed' && row.replays === 1 ? row : undefined;
    });
    expect((await messagesOf(userId)).map((row) => row.id)).toEqual(rows.map((row) => row.id));
  });

  it('a receiver failing N times then recovering gets every message under one webhook-id, in per-user order', async () => {
    const users = [newUser('order-a'), newUser('order-b')];
    // Written before any worker runs: three credits per user, interleaved.
    for (const step of [1, 2, 3]) for (const userId of users) await grant(userId, 10 * step, `step-${step}`);
    receiver.failNext(4, 503, 'down for maintenance');
    deliveringWorker();

    for (const userId of users) {
      const rows = await allFinished(userId, 3);
      expect(rows.map((row) => row.status)).toEqual(['delivered', 'delivered', 'delivered']);
      const ids = rows.map((row) => toWebhookId(row.message_id));
      // Each message accepted exactly once, in the order written, whatever failed before.
      expect(acceptedFor(userId).map((delivery) => delivery.webhookId)).toEqual(ids);
      expect(acceptedFor(userId).map((delivery) => delivery.body.data.amount)).toEqual([10, 20, 30]);
      // Every attempt of a message carried its one webhook-id; the failed ones came first.
      const attempts = receiver.deliveries.filter((delivery) => delivery.body.data.userId === userId);
      expect(new Set(attempts.map((delivery) => delivery.webhookId))).toEqual(new Set(ids));
      for (const [index, row] of rows.entries()) {
        const ofMessage = attempts.filter((delivery) => delivery.webhookId === ids[index]);
        expect(ofMessage.map((delivery) => delivery.answeredWith).at(-1)).toBe(204);
        expect(row.attempts).toBe(ofMessage.length);
        expect(row.last_status_code).toBe(204);
      }
    }
    // The four failures fell on the heads of the two users (the later ones waited).
    const failedAttempts = receiver.deliveries.filter((delivery) => delivery.answeredWith === 503);
    expect(failedAttempts).toHaveLength(4);
  });

  it('a receiver that hangs past the timeout is retried, and the message arrives under the same webhook-id', async () => {
    const userId = newUser('hang');
    await grant(userId, 42, 'hang');
    receiver.answers.push({ kind: 'hang' });
    deliveringWorker({ timeoutMs: 500 });

    const [row] = await allFinished(userId, 1);
    expect(row).toMatchObject({ status: 'delivered', attempts: 2, last_status_code: 204 });
    const attempts = receiver.deliveries.filter((delivery) => delivery.body.data.userId === userId);
    expect(attempts.map((delivery) => [delivery.webhookId, delivery.answeredWith])).toEqual([
      [toWebhookId(row?.message_id ?? ''), undefined],
      [toWebhookId(row?.message_id ?? ''), 204],
    ]);
  });

  it('a message is failed after the schedule, kept with its attempts and truncated answer, and a redeliver delivers it', async () => {
    const userId = newUser('failed');
    await grant(userId, 7, 'first');
    receiver.defaultAnswer = { kind: 'status', status: 500, body: `boom ${'x'.repeat(5_000)}` };
    deliveringWorker();

    const [failed] = await allFinished(userId, 1);
    expect(failed).toMatchObject({ status: 'failed', attempts: SHORT_SCHEDULE_MS.length + 1, last_status_code: 500 });
    expect(failed?.last_error).toMatch(/^HTTP 500: boom x+$/);
    expect(failed?.last_error?.length).toBeLessThan(600);
    const id = toWebhookId(failed?.message_id ?? '');
    const listed = await readJson(
      await stack.apiRequest(`/admin/app-webhooks/messages?userId=${userId}&status=failed`),
    );
    expect(listed).toEqual({
      // APP_WEBHOOK_URL is set for this stack: messages are delivered (not `not_configured`).
      delivery: 'on',
      messages: [
        {
          id,
          type: 'wallet.credited',
          userId,
          status: 'failed',
          attempts: 4,
          lastStatusCode: 500,
          lastError: failed?.last_error,
          nextAttemptAt: null,
          createdAt: failed?.created_at.toISOString(),
          deliveredAt: null,
        },
      ],
      nextCursor: null,
    });
    const shown = await readJson(await stack.apiRequest(`/admin/app-webhooks/messages/${id}`));
    expect(JSON.parse(shown.body)).toMatchObject({ type: 'wallet.credited', data: { userId, amount: 7 } });

    receiver.defaultAnswer = { kind: 'status', status: 200 };
    const redeliver = await stack.apiRequest(`/admin/app-webhooks/messages/${id}/redeliver`, { method: 'POST' });
    expect(redeliver.status).toBe(200);
    const [delivered] = await allFinished(userId, 1);
    expect(delivered).toMatchObject({ status: 'delivered', attempts: 1, last_status_code: 200 });
    expect(acceptedFor(userId).map((delivery) => delivery.webhookId)).toEqual([id]);
    // A second redeliver of a delivered message is allowed (the app lost it); a pending one is a 409.
    expect((await stack.apiRequest(`/admin/app-webhooks/messages/${id}/redeliver`, { method: 'POST' })).status).toBe(
      200,
    );
    const again = await stack.apiRequest(`/admin/app-webhooks/messages/${id}/redeliver`, { method: 'POST' });
    expect([200, 409]).toContain(again.status);
    expect((await stack.apiRequest('/admin/app-webhooks/messages/not-an-id')).status).toBe(400);
  });

  it("after Redis lost every job of the test's prefix, the relay hands the messages off again", async () => {
    const userId = newUser('flushed');
    await grant(userId, 5, 'one');
    await grant(userId, 6, 'two');
    // The relay hands both messages to the queue, where no consumer takes them.
    const relayOnly = stack.startWorker({ roles: ['relay'], appWebhooks: deliveringSettings() });
    await relayOnly.loops.relay?.runOnce();
    expect(await stack.appWebhookQueue.getJobCounts('waiting')).toMatchObject({ waiting: 2 });
    await stack.stopWorkers();

    // Redis loses everything under this test's prefix (never FLUSHALL: the server is shared).
    const redis = new Redis(testRedisUrl());
    try {
      const keys = await redis.keys(`${stack.prefix}:*`);
      if (keys.length > 0) await redis.del(...keys);
    } finally {
      redis.disconnect();
    }
    expect(await stack.appWebhookQueue.getJobCounts('waiting')).toMatchObject({ waiting: 0 });

    // A relay whose stale window has passed finds both rows handed off but jobless, and re-enqueues.
    await sql`UPDATE app_webhook_messages SET enqueued_at = now() - interval '2 minutes' WHERE user_id = ${userId}`.execute(
      stack.db,
    );
    const worker = deliveringWorker();
    const rows = await allFinished(userId, 2);
    expect(rows.map((row) => row.status)).toEqual(['delivered', 'delivered']);
    expect(acceptedFor(userId).map((delivery) => delivery.body.data.amount)).toEqual([5, 6]);
    const reenqueued = await worker.metrics.registry.getSingleMetricAsString('tally_relay_reenqueued_total');
    expect(reenqueued).toMatch(/source="app-webhooks"[^}]*} [1-9]/);
  });

  // Before the retention test, which deletes messages on purpose: the invariant holds until
  // retention prunes a delivered message.
  it('every ledger entry has exactly one wallet.* message, of its direction, naming it', async () => {
    const entries = await stack.db.selectFrom('ledger_entries').select('id').execute();
    expect(entries.length).toBeGreaterThan(10);
    expect(await walletMessageViolations(stack.db)).toEqual([]);
  });

  it('retention deletes delivered messages past APP_WEBHOOK_RETENTION_DAYS and keeps the rest', async () => {
    const userId = newUser('retention');
    for (const tag of ['old-delivered', 'new-delivered', 'old-failed']) await grant(userId, 3, tag);
    const [oldDelivered, newDelivered, oldFailed] = await messagesOf(userId);
    await sql`UPDATE app_webhook_messages SET status = 'delivered', delivered_at = now() - interval '31 days'
               WHERE id = ${oldDelivered?.id}`.execute(stack.db);
    await sql`UPDATE app_webhook_messages SET status = 'delivered', delivered_at = now() - interval '29 days'
               WHERE id = ${newDelivered?.id}`.execute(stack.db);
    await sql`UPDATE app_webhook_messages SET status = 'failed', created_at = now() - interval '60 days'
               WHERE id = ${oldFailed?.id}`.execute(stack.db);
    expect(await pruneAppWebhookMessages(stack.db, { retentionDays: 30 })).toBeGreaterThanOrEqual(1);
    expect((await messagesOf(userId)).map((row) => row.id)).toEqual([newDelivered?.id, oldFailed?.id]);
    // Without APP_WEBHOOK_URL nothing will deliver them: undelivered ones go after the same time.
    await pruneAppWebhookMessages(stack.db, { retentionDays: 30, undelivered: true });
    expect((await messagesOf(userId)).map((row) => row.id)).toEqual([newDelivered?.id]);
  });

  function deliveringSettings() {
    return {
      sender: createAppWebhookSender({ url: receiver.url, secrets, timeoutMs: 2_000 }),
      retryScheduleMs: SHORT_SCHEDULE_MS,
      concurrency: 4,
      retentionDays: 30,
    };
  }
});
