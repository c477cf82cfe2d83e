import { randomUUID } from 'node:crypto';
import { suiteStackWithFakeAppStore } from '../../support/app-store';
import { type AppleNotificationSpec, applePlanProduct, deliverApple } from '../../support/apple-notifications';
import type { FakeSubscriptionStatus } from '../../support/fakes/fake-app-store';
import { readJson } from '../../support/stack';

const DAY = 24 * 3600_000;

/**
 * App Store subscriptions (docs/stores-apple.md): every subscription notification re-reads
 * `GET /inApps/v1/subscriptions/{originalTransactionId}` from the (fake) App Store Server API and
 * applies the plan of `plans[].appStoreProducts`, so any order of notifications ends at the truth.
 */
describe('App Store subscriptions', () => {
  const { stack, fake, pki } = suiteStackWithFakeAppStore({ worker: { concurrency: 1 } });

  async function subscriber() {
    const userId = `apple-s-${randomUUID().slice(0, 8)}`;
    const { appleAppAccountToken: token } = await readJson(
      await stack.apiRequest(`/v1/users/${userId}/store-accounts`),
    );
    return {
      userId,
      token: token as string,
      originalTransactionId: `5000${Date.now()}${Math.floor(Math.random() * 1e4)}`,
    };
  }

  const status = (
    s: { token: string; originalTransactionId: string },
    state: FakeSubscriptionStatus['status'],
    expiresDate: number,
    extra: Partial<FakeSubscriptionStatus['transaction']> = {},
    autoRenewStatus: 0 | 1 = 1,
  ): FakeSubscriptionStatus => ({
    status: state,
    transaction: {
      transactionId: `${s.originalTransactionId}-${expiresDate}`,
      originalTransactionId: s.originalTransactionId,
      productId: applePlanProduct,
      type: 'Auto-Renewable Subscription',
      appAccountToken: s.token,
      expiresDate,
      ...extra,
    },
    renewalInfo: { autoRenewStatus },
  });

  /** Notifications that all name the subscription (their own bodies are stale snapshots). */
  const notice = (s: { token: string; originalTransactionId: string }, type: string): AppleNotificationSpec => ({
    type,
    transaction: {
      transactionId: `${s.originalTransactionId}-${type}`,
      originalTransactionId: s.originalTransactionId,
      productId: applePlanProduct,
      type: 'Auto-Renewable Subscription',
      appAccountToken: s.token,
      expiresDate: Date.now() + DAY,
    },
    renewalInfo: { autoRenewStatus: 1 },
  });

  async function deliverAll(specs: AppleNotificationSpec[]) {
    for (const spec of specs) {
      const row = await stack.finishedInboxRow('apple', await deliverApple(stack, pki, spec));
      expect(row.status).not.toBe('failed');
    }
  }

  const subscriptionOf = async (userId: string) => readJson(await stack.apiRequest(`/v1/users/${userId}/subscription`));

  it('ends at the same active plan whatever order its notifications come in', async () => {
    const expiresDate = Date.now() + 30 * DAY;
    const types = ['SUBSCRIBED', 'DID_RENEW', 'DID_CHANGE_RENEWAL_STATUS'];
    const results = [];
    for (const order of [types, [...types].reverse()]) {
      const s = await subscriber();
      fake.setSubscription(s.originalTransactionId, [status(s, 1, expiresDate, {}, 0)]);
      await deliverAll(order.map((type) => notice(s, type)));
      results.push(await subscriptionOf(s.userId));
    }
    for (const result of results) {
      expect(result).toMatchObject({
        planId: 'premium',
        status: 'active',
        store: 'app_store',
        autoRenew: false,
        expiresAt: new Date(expiresDate).toISOString(),
      });
    }
  });

  it('follows the truth as it changes: renewed, expired (a late SUBSCRIBED does not revive it), revoked by a refund', async () => {
    const s = await subscriber();
    const first = Date.now() + DAY;
    fake.setSubscription(s.originalTransactionId, [status(s, 1, first)]);
    await deliverAll([notice(s, 'SUBSCRIBED')]);
    expect(await subscriptionOf(s.userId)).toMatchObject({
      status: 'active',
      expiresAt: new Date(first).toISOString(),
    });

    const renewed = Date.now() + 31 * DAY;
    fake.setSubscription(s.originalTransactionId, [status(s, 1, renewed)]);
    await deliverAll([notice(s, 'DID_RENEW')]);
    expect(await subscriptionOf(s.userId)).toMatchObject({
      status: 'active',
      expiresAt: new Date(renewed).toISOString(),
    });

    fake.setSubscription(s.originalTransactionId, [status(s, 2, Date.now() - DAY)]);
    await deliverAll([notice(s, 'EXPIRED'), notice(s, 'SUBSCRIBED')]);
    expect(await subscriptionOf(s.userId)).toMatchObject({ status: 'inactive', planId: null });

    const other = await subscriber();
    fake.setSubscription(other.originalTransactionId, [status(other, 1, Date.now() + DAY)]);
    await deliverAll([notice(other, 'SUBSCRIBED')]);
    fake.setSubscription(other.originalTransactionId, [
      status(other, 5, Date.now() + DAY, { revocationDate: Date.now(), revocationReason: 0 }),
    ]);
    const refund = notice(other, 'REFUND');
    if (!refund.transaction) throw new Error('a notice names its transaction');
    await deliverAll([{ ...refund, transaction: { ...refund.transaction, revocationDate: Date.now() } }]);
    expect(await subscriptionOf(other.userId)).toMatchObject({ status: 'inactive' });
    const history = await stack.db
      .selectFrom('subscription_history')
      .select(['change', 'source'])
      .where('user_id', '=', other.userId)
      .orderBy('id')
      .execute();
    expect(history).toEqual([
      { change: 'activated', source: 'apple' },
      { change: 'deactivated', source: 'apple' },
    ]);
  });

  it('keeps access in the billing grace period', async () => {
    const s = await subscriber();
    const grace = Date.now() + 6 * DAY;
    fake.setSubscription(s.originalTransactionId, [
      { ...status(s, 4, Date.now() - 3600_000), renewalInfo: { autoRenewStatus: 1, gracePeriodExpiresDate: grace } },
    ]);
    await deliverAll([notice(s, 'DID_FAIL_TO_RENEW')]);
    expect(await subscriptionOf(s.userId)).toMatchObject({
      status: 'active',
      expiresAt: new Date(grace).toISOString(),
    });
  });
});
