import { randomUUID } from 'node:crypto';

/**
 * A RevenueCat NON_RENEWING_PURCHASE body in the shape RevenueCat sends. `originalAppUserId` and
 * `aliases` default to `userId` alone (a customer that never went by another id).
 */
export function revenueCatTokenPurchase(
  options: {
    id?: string;
    userId?: string;
    originalAppUserId?: string;
    aliases?: string[];
    productId?: string;
    /** The store transaction; by default one of the event's own (`tx-{id}`), as a real purchase has. */
    transactionId?: string;
    /** The customer's attributes as RevenueCat attaches them (none by default). */
    subscriberAttributes?: Record<string, { value: string }>;
  } = {},
): string {
  const userId = options.userId ?? 'user-1';
  const id = options.id ?? randomUUID();
  return JSON.stringify({
    api_version: '1.0',
    event: {
      id,
      type: 'NON_RENEWING_PURCHASE',
      app_user_id: userId,
      original_app_user_id: options.originalAppUserId ?? userId,
      aliases: options.aliases ?? [userId],
      product_id: options.productId ?? 'tokens.100',
      period_type: 'NORMAL',
      purchased_at_ms: 1_700_000_000_000,
      expiration_at_ms: null,
      event_timestamp_ms: 1_700_000_000_100,
      environment: 'PRODUCTION',
      store: 'APP_STORE',
      transaction_id: options.transactionId ?? `tx-${id}`,
      price: 4.99,
      currency: 'USD',
      ...(options.subscriberAttributes ? { subscriber_attributes: options.subscriberAttributes } : {}),
    },
  });
}

/** RevenueCat's refund of a consumable: a CANCELLATION of the pack's product naming the purchase's transaction. */
export function revenueCatTokenPackRefund(options: {
  id: string;
  userId: string;
  transactionId: string;
  environment?: string;
}) {
  return JSON.stringify({
    api_version: '1.0',
    event: {
      id: options.id,
      type: 'CANCELLATION',
      app_user_id: options.userId,
      original_app_user_id: options.userId,
      aliases: [options.userId],
      product_id: 'tokens.100',
      period_type: 'NORMAL',
      purchased_at_ms: 1_700_000_000_000,
      expiration_at_ms: null,
      event_timestamp_ms: 1_700_000_500_000,
      environment: options.environment ?? 'PRODUCTION',
      store: 'APP_STORE',
      transaction_id: options.transactionId,
      original_transaction_id: options.transactionId,
      cancel_reason: 'CUSTOMER_SUPPORT',
      price: -4.99,
      currency: 'USD',
    },
  });
}

/** A Stripe payment_intent.succeeded event for a catalog token pack. */
export function stripeTokenPackPayment(
  options: { eventId?: string; paymentIntentId?: string; userId?: string; packId?: string; amount?: number } = {},
): string {
  return JSON.stringify({
    id: options.eventId ?? `evt_${randomUUID().replaceAll('-', '')}`,
    object: 'event',
    api_version: '2025-03-31.basil',
    created: 1_700_000_000,
    livemode: false,
    type: 'payment_intent.succeeded',
    data: {
      object: {
        id: options.paymentIntentId ?? `pi_${randomUUID().replaceAll('-', '')}`,
        object: 'payment_intent',
        amount: options.amount ?? 499,
        amount_received: options.amount ?? 499,
        currency: 'usd',
        customer: 'cus_test_1',
        status: 'succeeded',
        metadata: { user_id: options.userId ?? 'user-1', pack_id: options.packId ?? 'tokens_100' },
      },
    },
  });
}
