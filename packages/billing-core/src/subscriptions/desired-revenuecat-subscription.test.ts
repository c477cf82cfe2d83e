import { toCatalog } from '../catalog/catalog';
import { productionOnlyPolicy } from '../provider-data/payment-environment';
import { desiredRevenueCatSubscription } from './desired-revenuecat-subscription';

const catalog = toCatalog({
  plans: [
    { id: 'premium', revenuecatProducts: ['premium.monthly', 'premium.annual'], stripePrices: [] },
    { id: 'pro', revenuecatProducts: ['pro.monthly'], stripePrices: [] },
  ],
  tokenPacks: [],
  studio: {
    freeDailyAllowance: { image_edit: 5, music: 2 },
    prices: { image_edit: 5, music_clip: 5, music_full: 15 },
    musicClipMaxSeconds: 30,
  },
});
const now = new Date('2025-06-01T00:00:00Z');
const deps = { catalog, policy: productionOnlyPolicy, now };
const subscriber = (subscriptions: Record<string, Record<string, unknown>>) =>
  ({ original_app_user_id: 'u', subscriptions }) as unknown as Parameters<typeof desiredRevenueCatSubscription>[0];

describe('what a RevenueCat subscriber means for Tally', () => {
  it('keeps the catalog subscription with the latest future expiry', () => {
    expect(
      desiredRevenueCatSubscription(
        subscriber({
          'premium.monthly': { expires_date: '2025-06-10T00:00:00Z', store: 'app_store' },
          'pro.monthly': { expires_date: '2025-07-01T00:00:00Z', store: 'play_store' },
          'not.in.catalog': { expires_date: '2030-01-01T00:00:00Z' },
          'premium.annual': { expires_date: '2025-05-01T00:00:00Z' },
        }),
        deps,
      ),
    ).toEqual({
      status: 'active',
      planId: 'pro',
      productId: 'pro.monthly',
      expiresAt: new Date('2025-07-01T00:00:00Z'),
      store: 'play_store',
      autoRenew: true,
      billingIssueDetectedAt: null,
    });
  });

  it('treats a null expires_date as lifetime and maps Play ids subscription:base_plan', () => {
    const desired = desiredRevenueCatSubscription(
      subscriber({
        'pro.monthly': { expires_date: '2025-07-01T00:00:00Z' },
        'premium.annual:yearly-base': { expires_date: null, unsubscribe_detected_at: '2025-05-01T00:00:00Z' },
      }),
      deps,
    );
    expect(desired).toMatchObject({ planId: 'premium', productId: 'premium.annual:yearly-base', expiresAt: null });
    expect(desired).toMatchObject({ autoRenew: false });
  });

  it('ignores sandbox subscriptions unless the policy accepts sandbox', () => {
    const sandboxOnly = subscriber({ 'premium.monthly': { expires_date: '2025-07-01T00:00:00Z', is_sandbox: true } });
    expect(desiredRevenueCatSubscription(sandboxOnly, deps)).toEqual({ status: 'inactive' });
    expect(
      desiredRevenueCatSubscription(sandboxOnly, {
        ...deps,
        policy: { paymentEnvironments: new Set(['production', 'sandbox']), stripeConnectAccounts: new Set() },
      }),
    ).toMatchObject({ status: 'active', planId: 'premium' });
  });

  it('is inactive when nothing runs into the future (a grace period counts)', () => {
    expect(
      desiredRevenueCatSubscription(subscriber({ 'premium.monthly': { expires_date: '2025-05-31T23:59:59Z' } }), deps),
    ).toEqual({ status: 'inactive' });
    expect(
      desiredRevenueCatSubscription(
        subscriber({
          'premium.monthly': {
            expires_date: '2025-05-31T00:00:00Z',
            grace_period_expires_date: '2025-06-05T00:00:00Z',
            billing_issues_detected_at: '2025-05-31T00:00:00Z',
          },
        }),
        deps,
      ),
    ).toMatchObject({
      status: 'active',
      expiresAt: new Date('2025-06-05T00:00:00Z'),
      billingIssueDetectedAt: new Date('2025-05-31T00:00:00Z'),
    });
  });
});
