import { randomUUID } from 'node:crypto';
import { suiteStackWithFakeAppStore } from '../../support/app-store';
import { deliverApple } from '../../support/apple-notifications';
import { eventually, readJson } from '../../support/stack';

/**
 * CONSUMPTION_REQUEST (docs/stores-apple.md): a durable row written with the notification, answered
 * after commit by the apple-consumption loop with Send Consumption Information (the share of the
 * pack's lot spent), only with the user's recorded consent; retried while Apple fails, never sent
 * again once Apple answered 2xx. Against the fake App Store Server API, which checks Tally's JWT.
 */
describe('App Store consumption requests', () => {
  const loop = { intervalMs: 50, backoff: { baseDelayMs: 50, maxDelayMs: 200 } };
  const { stack, fake, pki } = suiteStackWithFakeAppStore({
    worker: { roles: ['inbox', 'relay', 'apple-consumption'], appleConsumption: loop },
  });
  // Two replicas of the loop: a request is still answered once.
  beforeAll(() => {
    stack.startWorker({ roles: ['apple-consumption'], appleConsumption: loop });
  });

  /** A user who bought a 100-token pack and spent `spent` of it; consented as given (or never asked). */
  async function buyer(spent: number, consent?: boolean) {
    const userId = `apple-c-${randomUUID().slice(0, 8)}`;
    const { appleAppAccountToken: token } = await readJson(
      await stack.apiRequest(`/v1/users/${userId}/store-accounts`),
    );
    const transactionId = `4000${Date.now()}${Math.floor(Math.random() * 1000)}`;
    const uuid = await deliverApple(stack, pki, {
      type: 'ONE_TIME_CHARGE',
      transaction: { transactionId, appAccountToken: token },
    });
    expect(await stack.finishedInboxRow('apple', uuid)).toMatchObject({ outcome_code: 'credited' });
    if (spent > 0) {
      await stack.postPlainEntry({
        userId,
        reference: `test:spend:${transactionId}`,
        amount: -spent,
        reason: 'test_spend',
      });
    }
    if (consent !== undefined) {
      const answer = await stack.apiRequest(`/v1/users/${userId}/store-consent`, {
        method: 'POST',
        body: { consented: consent },
      });
      expect(answer.status).toBe(200);
    }
    return { userId, token, transactionId };
  }

  async function requestConsumption(transactionId: string, token: string) {
    const uuid = await deliverApple(stack, pki, {
      type: 'CONSUMPTION_REQUEST',
      transaction: { transactionId, appAccountToken: token },
      consumptionRequestReason: 'UNINTENDED_PURCHASE',
    });
    expect(await stack.finishedInboxRow('apple', uuid)).toMatchObject({
      status: 'processed',
      outcome_code: 'consumption_request_recorded',
    });
    return uuid;
  }

  const requestRow = (uuid: string) =>
    stack.db
      .selectFrom('apple_consumption_requests')
      .selectAll()
      .where('notification_uuid', '=', uuid)
      .executeTakeFirstOrThrow();
  const finished = (uuid: string) =>
    eventually(`consumption request ${uuid} to finish`, async () => {
      const row = await requestRow(uuid);
      return row.status === 'pending' ? undefined : row;
    });
  const sentFor = (transactionId: string) => fake.consumptions.filter((sent) => sent.transactionId === transactionId);

  it('sends the share of the pack spent, once, when the user consented', async () => {
    const { transactionId, token } = await buyer(25, true);
    const uuid = await requestConsumption(transactionId, token);
    expect(await finished(uuid)).toMatchObject({
      status: 'sent',
      consumption_percentage: 25_000,
      reason: 'UNINTENDED_PURCHASE',
    });
    expect(sentFor(transactionId)).toEqual([
      {
        transactionId,
        body: {
          customerConsented: true,
          consumptionPercentage: 25_000,
          deliveryStatus: 'DELIVERED',
          sampleContentProvided: false,
        },
      },
    ]);
    // The loops keep running: a sent request is never claimed again.
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect(sentFor(transactionId)).toHaveLength(1);
    expect(fake.refusedTokens).toEqual([]);
  });

  it('sends nothing without consent, never asked or refused', async () => {
    for (const consent of [undefined, false]) {
      const { transactionId, token } = await buyer(100, consent);
      const uuid = await requestConsumption(transactionId, token);
      expect(await finished(uuid)).toMatchObject({ status: 'no_consent', consumption_percentage: null });
      expect(sentFor(transactionId)).toEqual([]);
      expect(fake.requests.filter((request) => request.path.endsWith(`/${transactionId}`))).toEqual([]);
    }
  });

  it('retries while the API fails and sends once when it recovers', async () => {
    const { transactionId, token } = await buyer(100, true);
    fake.failNext(2, 503);
    const uuid = await requestConsumption(transactionId, token);
    const row = await finished(uuid);
    expect(row).toMatchObject({ status: 'sent', consumption_percentage: 100_000, tries: 3 });
    expect(fake.requests.filter((request) => request.path.endsWith(`/${transactionId}`))).toHaveLength(3);
    expect(sentFor(transactionId)).toHaveLength(1);
    // Counted by the replica that ran each claim: summed over both.
    const counted = async (outcome: string) => {
      let total = 0;
      for (const worker of stack.workers) {
        const { values } = await worker.metrics.appleConsumptionRequests.get();
        total += values.find((value) => value.labels.outcome === outcome)?.value ?? 0;
      }
      return total;
    };
    expect(await counted('retry')).toBeGreaterThanOrEqual(2);
    expect(await counted('sent')).toBeGreaterThanOrEqual(2);
  });

  it('stops at a refusal (4xx): nothing is sent again', async () => {
    const { transactionId, token } = await buyer(0, true);
    fake.failNext(1, 400);
    const uuid = await requestConsumption(transactionId, token);
    expect(await finished(uuid)).toMatchObject({ status: 'rejected', tries: 1 });
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect(fake.requests.filter((request) => request.path.endsWith(`/${transactionId}`))).toHaveLength(1);
    expect(sentFor(transactionId)).toEqual([]);
  });
});
