import type { GooglePlaySubscriptionPurchase } from '@tally/billing-core';
import { subscriptionNotice } from '../../support/fakes/google-play-keys';
import { fakePackageName, googlePlayActions, suiteStackWithFakeGooglePlay } from '../../support/google-play';
import { readJson } from '../../support/stack';

/**
 * Google Play subscriptions (docs/stores-google-play.md): every notification re-reads
 * purchases.subscriptionsv2.get and applies the plan of `plans[].googlePlayProducts` as
 * RevenueCat's path does, so the subscription converges on Google's state whatever order the
 * notifications arrive in, late and repeated ones included.
 */
describe('Google Play subscriptions', () => {
  const { stack, fake } = suiteStackWithFakeGooglePlay({ worker: { roles: ['inbox', 'relay'] } });
  const play = googlePlayActions(stack, fake);
  let seq = 0;
  const newUser = () => `gsub-${++seq}-${Date.now().toString(36)}`;
  const inDays = (days: number) => new Date(Date.now() + days * 86_400_000).toISOString();
  const state = (
    accountId: string,
    subscriptionState: string,
    expiryTime: string,
    autoRenewEnabled: boolean,
  ): GooglePlaySubscriptionPurchase => ({
    subscriptionState,
    externalAccountIdentifiers: { obfuscatedExternalAccountId: accountId },
    lineItems: [
      {
        productId: 'premium_monthly',
        expiryTime,
        autoRenewingPlan: { autoRenewEnabled },
        offerDetails: { basePlanId: 'monthly' },
      },
    ],
  });
  const subscriptionOf = async (userId: string) => {
    const answer = await stack.apiRequest(`/v1/users/${userId}/subscription`);
    return answer.status === 404 ? null : ((await readJson(answer)) as Record<string, unknown>);
  };
  const notice = (token: string, type: number) => subscriptionNotice(fakePackageName, 'premium_monthly', token, type);
  const SUBSCRIPTION = { RENEWED: 2, CANCELED: 3, PURCHASED: 4, EXPIRED: 13 } as const;

  it('converges on what Google says whatever the order: renewed before purchased, a late purchase after expiry', async () => {
    const userId = newUser();
    const accountId = await play.accountOf(userId);
    const token = `sub-${newUser()}`;
    const expiry = inDays(30);
    fake.subscriptions.set(token, state(accountId, 'SUBSCRIPTION_STATE_ACTIVE', expiry, true));
    // The renewal's notification is processed before the purchase's.
    const renewed = await play.deliver(notice(token, SUBSCRIPTION.RENEWED));
    expect(renewed).toMatchObject({ status: 'processed', outcome_code: 'subscription_synced' });
    const purchased = await play.deliver(notice(token, SUBSCRIPTION.PURCHASED));
    expect(purchased).toMatchObject({ status: 'processed', outcome_code: 'already_synchronized' });
    expect(await subscriptionOf(userId)).toMatchObject({
      planId: 'premium',
      status: 'active',
      expiresAt: expiry,
      store: 'PLAY_STORE',
      autoRenew: true,
    });
    // Canceled: kept until its expiry, auto-renew off.
    fake.subscriptions.set(token, state(accountId, 'SUBSCRIPTION_STATE_CANCELED', expiry, false));
    await play.deliver(notice(token, SUBSCRIPTION.CANCELED));
    expect(await subscriptionOf(userId)).toMatchObject({ planId: 'premium', status: 'active', autoRenew: false });
    // Expired; then the old purchase's notification again (a redelivery under another id): still expired.
    fake.subscriptions.set(token, state(accountId, 'SUBSCRIPTION_STATE_EXPIRED', inDays(-1), false));
    expect(await play.deliver(notice(token, SUBSCRIPTION.EXPIRED))).toMatchObject({
      outcome_code: 'subscription_synced',
    });
    expect(await play.deliver(notice(token, SUBSCRIPTION.PURCHASED))).toMatchObject({
      outcome_code: 'already_synchronized',
    });
    expect(await subscriptionOf(userId)).toMatchObject({ planId: null, status: 'inactive' });
    const history = await stack.db
      .selectFrom('subscription_history')
      .select(['change', 'source'])
      .where('user_id', '=', userId)
      .orderBy('id')
      .execute();
    expect(history).toEqual([
      { change: 'activated', source: 'google_play' },
      { change: 'updated', source: 'google_play' },
      { change: 'deactivated', source: 'google_play' },
    ]);
  });

  it('ends at the same state when the same notifications arrive all at once, in any order', async () => {
    const userId = newUser();
    const accountId = await play.accountOf(userId);
    const token = `sub-${newUser()}`;
    const expiry = inDays(60);
    fake.subscriptions.set(token, state(accountId, 'SUBSCRIPTION_STATE_ACTIVE', expiry, true));
    const rows = await Promise.all(
      [SUBSCRIPTION.EXPIRED, SUBSCRIPTION.CANCELED, SUBSCRIPTION.PURCHASED, SUBSCRIPTION.RENEWED].map((type) =>
        play.deliver(notice(token, type)),
      ),
    );
    expect(rows.map((row) => row.status)).toEqual(['processed', 'processed', 'processed', 'processed']);
    expect(rows.filter((row) => row.outcome_code === 'subscription_synced')).toHaveLength(1);
    expect(await subscriptionOf(userId)).toMatchObject({ planId: 'premium', status: 'active', expiresAt: expiry });
  });

  it('ignores a subscription that names no account id Tally gave, and reads nothing for a test notification', async () => {
    const token = `sub-${newUser()}`;
    fake.subscriptions.set(token, state('stranger', 'SUBSCRIPTION_STATE_ACTIVE', inDays(30), true));
    expect(await play.deliver(notice(token, SUBSCRIPTION.PURCHASED))).toMatchObject({
      status: 'ignored',
      outcome_code: 'no_user',
    });
    const reads = fake.count('subscriptionsv2.get');
    expect(await play.deliver({ packageName: fakePackageName, testNotification: { version: '1.0' } })).toMatchObject({
      status: 'ignored',
      outcome_code: 'test_event',
    });
    expect(fake.count('subscriptionsv2.get')).toBe(reads);
  });
});
