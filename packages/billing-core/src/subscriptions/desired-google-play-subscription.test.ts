import { toCatalog } from '../catalog/catalog';
import type { GooglePlaySubscriptionPurchase } from '../ports/google-play-api';
import { desiredGooglePlaySubscription } from './desired-google-play-subscription';

const catalog = toCatalog({
  plans: [
    { id: 'premium', stripePrices: [], googlePlayProducts: ['premium_sub'] },
    { id: 'pro', stripePrices: [], googlePlayProducts: ['pro_sub:yearly'] },
  ],
  tokenPacks: [],
  studio: {
    freeDailyAllowance: { image_edit: 5, music: 2 },
    prices: { image_edit: 5, music_clip: 5, music_full: 15 },
    musicClipMaxSeconds: 30,
  },
});
const now = new Date('2025-06-01T00:00:00Z');
const read = (
  subscriptionState: string,
  lineItems: GooglePlaySubscriptionPurchase['lineItems'],
): GooglePlaySubscriptionPurchase => ({ subscriptionState, lineItems });
const item = (productId: string, expiryTime: string, autoRenewEnabled = true, basePlanId?: string) => ({
  productId,
  expiryTime,
  autoRenewingPlan: { autoRenewEnabled },
  ...(basePlanId ? { offerDetails: { basePlanId } } : {}),
});

describe('what a Google Play subscription read means for Tally', () => {
  it('keeps the catalog line item with the latest future expiry, by product or product:basePlan', () => {
    expect(
      desiredGooglePlaySubscription(
        read('SUBSCRIPTION_STATE_ACTIVE', [
          item('premium_sub', '2025-06-20T00:00:00Z', true, 'monthly'),
          item('pro_sub', '2025-07-01T00:00:00Z', false, 'monthly'),
          item('pro_sub', '2025-06-25T00:00:00Z', false, 'yearly'),
          item('other_sub', '2030-01-01T00:00:00Z'),
        ]),
        { catalog, now },
      ),
    ).toEqual({
      status: 'active',
      planId: 'pro',
      productId: 'pro_sub:yearly',
      expiresAt: new Date('2025-06-25T00:00:00Z'),
      store: 'PLAY_STORE',
      autoRenew: false,
      billingIssueDetectedAt: null,
    });
  });

  it('keeps a canceled subscription until its expiry, and a grace period with its billing issue', () => {
    const canceled = desiredGooglePlaySubscription(
      read('SUBSCRIPTION_STATE_CANCELED', [item('premium_sub', '2025-06-10T00:00:00Z', false)]),
      { catalog, now },
    );
    expect(canceled).toMatchObject({ status: 'active', planId: 'premium', autoRenew: false });
    const grace = desiredGooglePlaySubscription(
      read('SUBSCRIPTION_STATE_IN_GRACE_PERIOD', [item('premium_sub', '2025-06-03T00:00:00Z')]),
      { catalog, now },
    );
    expect(grace).toMatchObject({ status: 'active', billingIssueDetectedAt: now });
  });

  it('gives no plan on hold, paused, expired, pending, past its expiry, or for a product in no plan', () => {
    for (const state of [
      'SUBSCRIPTION_STATE_ON_HOLD',
      'SUBSCRIPTION_STATE_PAUSED',
      'SUBSCRIPTION_STATE_EXPIRED',
      'SUBSCRIPTION_STATE_PENDING',
      'SUBSCRIPTION_STATE_PENDING_PURCHASE_CANCELED',
    ]) {
      expect(
        desiredGooglePlaySubscription(read(state, [item('premium_sub', '2025-07-01T00:00:00Z')]), { catalog, now }),
      ).toEqual({
        status: 'inactive',
      });
    }
    expect(
      desiredGooglePlaySubscription(read('SUBSCRIPTION_STATE_ACTIVE', [item('premium_sub', '2025-05-31T00:00:00Z')]), {
        catalog,
        now,
      }),
    ).toEqual({ status: 'inactive' });
    expect(
      desiredGooglePlaySubscription(read('SUBSCRIPTION_STATE_ACTIVE', [item('other_sub', '2025-07-01T00:00:00Z')]), {
        catalog,
        now,
      }),
    ).toEqual({ status: 'inactive' });
  });
});
