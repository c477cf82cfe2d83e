import type { Catalog } from '../catalog/catalog';
import type { RevenueCatSubscriber } from '../ports/revenuecat-api';
import type { EventPolicy } from '../provider-data/payment-environment';

/** The subscription state a provider's truth asks for. */
export type DesiredSubscription =
  | {
      status: 'active';
      planId: string;
      productId: string;
      /** Null: lifetime. */
      expiresAt: Date | null;
      store: string | null;
      autoRenew: boolean;
      billingIssueDetectedAt: Date | null;
    }
  | { status: 'inactive' };

function toDate(value: string | null | undefined): Date | null {
  if (value === null || value === undefined) return null;
  const time = Date.parse(value);
  return Number.isNaN(time) ? null : new Date(time);
}

/**
 * What a RevenueCat subscriber's state means for Tally, at `now`: among the subscriptions
 * (keyed by product id; Play ids `subscription:base_plan`) whose product maps to a catalog plan
 * and whose environment the policy accepts (`is_sandbox`), the one that runs latest into the
 * future (a null `expires_date` is lifetime and wins; a grace period extends the expiry). None in
 * the future → inactive. Auto-renew is off once RevenueCat detected the unsubscribe.
 */
export function desiredRevenueCatSubscription(
  subscriber: RevenueCatSubscriber,
  deps: { catalog: Catalog; policy: EventPolicy; now: Date },
): DesiredSubscription {
  let best: { desired: Extract<DesiredSubscription, { status: 'active' }>; endsAt: number } | undefined;
  for (const [productId, subscription] of Object.entries(subscriber.subscriptions ?? {})) {
    const plan = deps.catalog.findPlanByRevenueCatProduct(productId);
    if (!plan) continue;
    const environment = subscription.is_sandbox === true ? 'sandbox' : 'production';
    if (!deps.policy.paymentEnvironments.has(environment)) continue;
    const expires = toDate(subscription.expires_date);
    if (subscription.expires_date !== null && subscription.expires_date !== undefined && expires === null) continue;
    const grace = toDate(subscription.grace_period_expires_date);
    const effectiveExpiry = expires === null ? null : grace && grace > expires ? grace : expires;
    const endsAt = effectiveExpiry === null ? Number.POSITIVE_INFINITY : effectiveExpiry.getTime();
    if (endsAt <= deps.now.getTime()) continue;
    if (best && best.endsAt >= endsAt) continue;
    best = {
      endsAt,
      desired: {
        status: 'active',
        planId: plan.id,
        productId,
        expiresAt: effectiveExpiry,
        store: subscription.store ?? null,
        autoRenew: !subscription.unsubscribe_detected_at,
        billingIssueDetectedAt: toDate(subscription.billing_issues_detected_at),
      },
    };
  }
  return best?.desired ?? { status: 'inactive' };
}
