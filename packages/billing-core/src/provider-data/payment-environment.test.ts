import { toRevenueCatInboxDraftFromBody } from '../providers/revenuecat/revenuecat-event';
import { toStripeInboxDraftFromBody } from '../providers/stripe/stripe-event';
import { paymentEnvironments } from './payment-environment';

describe('the payment environment vocabulary', () => {
  const stripe = (livemode: unknown) =>
    toStripeInboxDraftFromBody(JSON.stringify({ id: 'evt_env', type: 'invoice.paid', livemode, data: { object: {} } }));
  const revenueCat = (event: Record<string, unknown>) =>
    toRevenueCatInboxDraftFromBody(
      JSON.stringify({ api_version: '1.0', event: { id: 'rc-env', type: 'RENEWAL', ...event } }),
    );
  const stored = (draft: { livemode: boolean | null; environment: string | null }) => [
    draft.livemode,
    draft.environment,
  ];

  it('is what ingest stores for both providers: production, sandbox, or null when the event names none', () => {
    expect([...paymentEnvironments]).toEqual(['production', 'sandbox']);
    expect({
      stripeLive: stored(stripe(true)),
      stripeTest: stored(stripe(false)),
      stripeOdd: stored(stripe('yes')),
      revenueCatProduction: stored(revenueCat({ environment: 'PRODUCTION' })),
      revenueCatSandbox: stored(revenueCat({ environment: 'SANDBOX' })),
      revenueCatLowerCasePurchaseEnvironment: stored(revenueCat({ purchase_environment: 'sandbox' })),
      revenueCatUndocumented: stored(revenueCat({ environment: 'Staging' })),
      revenueCatNone: stored(revenueCat({})),
    }).toEqual({
      stripeLive: [true, 'production'],
      stripeTest: [false, 'sandbox'],
      stripeOdd: [null, null],
      revenueCatProduction: [true, 'production'],
      revenueCatSandbox: [false, 'sandbox'],
      revenueCatLowerCasePurchaseEnvironment: [false, 'sandbox'],
      revenueCatUndocumented: [false, 'sandbox'],
      revenueCatNone: [null, null],
    });
  });
});
