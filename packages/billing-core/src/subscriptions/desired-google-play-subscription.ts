import type { Catalog } from '../catalog/catalog';
import type { PaymentEnvironment } from '../db/schema';
import type { GooglePlaySubscriptionPurchase } from '../ports/google-play-api';
import type { DesiredSubscription } from './desired-revenuecat-subscription';

/** The `store` Tally records for a Google Play subscription (RevenueCat's name for the store). */
export const googlePlayStore = 'PLAY_STORE';

/**
 * States in which the subscriber keeps the plan until the line item's expiry: active, in the grace
 * period after a failed renewal (a billing issue), and canceled but not yet expired. On hold,
 * paused, expired, pending and a canceled pending purchase give no plan.
 */
const entitledStates = new Set([
  'SUBSCRIPTION_STATE_ACTIVE',
  'SUBSCRIPTION_STATE_IN_GRACE_PERIOD',
  'SUBSCRIPTION_STATE_CANCELED',
]);

/** A licence tester's subscription (`testPurchase` present) is sandbox. */
export function environmentOfSubscription(subscription: GooglePlaySubscriptionPurchase): PaymentEnvironment {
  return subscription.testPurchase ? 'sandbox' : 'production';
}

/**
 * What a `purchases.subscriptionsv2.get` read means for Tally at `now`: among its line items whose
 * product (`productId:basePlanId`, or `productId`) maps to a catalog plan, the one that runs latest
 * into the future, when the subscription's state entitles its subscriber; otherwise inactive.
 * Auto-renew is the line item's `autoRenewEnabled`; the grace period is a billing issue seen at
 * `now`.
 */
export function desiredGooglePlaySubscription(
  subscription: GooglePlaySubscriptionPurchase,
  deps: { catalog: Catalog; now: Date },
): DesiredSubscription {
  if (!entitledStates.has(subscription.subscriptionState)) return { status: 'inactive' };
  let best: { desired: Extract<DesiredSubscription, { status: 'active' }>; endsAt: number } | undefined;
  for (const item of subscription.lineItems) {
    const basePlan = item.offerDetails?.basePlanId;
    const productId = basePlan ? `${item.productId}:${basePlan}` : item.productId;
    const plan = deps.catalog.findPlanByStoreProduct('googlePlay', productId);
    if (!plan) continue;
    const endsAt = item.expiryTime ? Date.parse(item.expiryTime) : Number.NaN;
    if (Number.isNaN(endsAt) || endsAt <= deps.now.getTime()) continue;
    if (best && best.endsAt >= endsAt) continue;
    best = {
      endsAt,
      desired: {
        status: 'active',
        planId: plan.id,
        productId,
        expiresAt: new Date(endsAt),
        store: googlePlayStore,
        autoRenew: item.autoRenewingPlan?.autoRenewEnabled === true,
        billingIssueDetectedAt:
          subscription.subscriptionState === 'SUBSCRIPTION_STATE_IN_GRACE_PERIOD' ? deps.now : null,
      },
    };
  }
  return best?.desired ?? { status: 'inactive' };
}
