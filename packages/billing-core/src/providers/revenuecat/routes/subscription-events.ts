import { ignored } from '../../../inbox/inbox-handler';
import { defineRoute } from '../../shared/create-provider-handler';
import type { RevenueCatEvent } from '../revenuecat-event';

/**
 * Subscription event types. They are notifications that the subscriber changed; the truth is
 * re-read from RevenueCat's REST API (see product.md), which also says which subscriptions are
 * sandbox ones, so these run even when the event names no environment.
 */
export const revenueCatSubscriptionEventTypes = [
  'INITIAL_PURCHASE',
  'RENEWAL',
  'PRODUCT_CHANGE',
  'UNCANCELLATION',
  'CANCELLATION',
  'BILLING_ISSUE',
  'SUBSCRIPTION_EXTENDED',
  'SUBSCRIPTION_PAUSED',
  'EXPIRATION',
  'TRANSFER',
  'TEMPORARY_ENTITLEMENT_GRANT',
  'REFUND_REVERSED',
] as const;

/** Until the sync lands, these are kept as ignored with a code that a replay-by-filter selects. */
export function createSubscriptionEventsRoute() {
  return defineRoute<RevenueCatEvent, undefined>({
    environmentCheck: 'api',
    async apply() {
      return ignored('awaiting_subscription_sync', 'subscription sync not built yet; replay once it is');
    },
  });
}
