import type { Catalog } from '../catalog/catalog';
import type { AppleSubscriptionStatus } from '../ports/app-store-api';
import type { DesiredSubscription } from './desired-revenuecat-subscription';

/** Apple's subscription statuses that give access: 1 active, 4 billing grace period. */
const activeStatuses: ReadonlySet<number> = new Set([1, 4]);

/**
 * What the App Store's subscription statuses (`GET /inApps/v1/subscriptions/{id}`) mean for
 * Tally, at `now`: among the subscriptions whose product maps to a catalog plan
 * (`plans[].appStoreProducts`), active or in their billing grace period, not revoked and running
 * past now (a grace period extends the expiry), the one that runs latest. None → inactive.
 * Auto-renew is the renewal info's `autoRenewStatus`; a grace period or billing retry is a billing
 * issue. The environment was decided by the notification (the API host read is its own).
 */
export function desiredAppleSubscription(
  statuses: readonly AppleSubscriptionStatus[],
  deps: { catalog: Catalog; now: Date },
): DesiredSubscription {
  let best: { desired: Extract<DesiredSubscription, { status: 'active' }>; endsAt: number } | undefined;
  for (const { status, transaction, renewalInfo } of statuses) {
    const plan = deps.catalog.findPlanByStoreProduct('appStore', transaction.productId);
    // guard: apple-subscription-active-status
    if (!plan || !activeStatuses.has(status) || transaction.revocationDate) continue;
    const expires = transaction.expiresDate ?? null;
    const grace = renewalInfo?.gracePeriodExpiresDate ?? null;
    const endsAt = expires === null ? Number.POSITIVE_INFINITY : Math.max(expires, grace ?? 0);
    if (endsAt <= deps.now.getTime()) continue;
    if (best && best.endsAt >= endsAt) continue;
    best = {
      endsAt,
      desired: {
        status: 'active',
        planId: plan.id,
        productId: transaction.productId,
        expiresAt: Number.isFinite(endsAt) ? new Date(endsAt) : null,
        store: 'app_store',
        autoRenew: renewalInfo?.autoRenewStatus === 1,
        billingIssueDetectedAt: status === 4 || renewalInfo?.isInBillingRetryPeriod === true ? deps.now : null,
      },
    };
  }
  return best?.desired ?? { status: 'inactive' };
}
