import { randomUUID } from 'node:crypto';

/** A RevenueCat subscription lifecycle event body (any type), in the shape RevenueCat sends. */
export function revenueCatSubscriptionEvent(
  options: {
    id?: string;
    type?: string;
    userId?: string;
    originalAppUserId?: string;
    aliases?: string[];
    productId?: string;
    environment?: string | null;
    transferredFrom?: string[];
    transferredTo?: string[];
  } = {},
): string {
  const type = options.type ?? 'INITIAL_PURCHASE';
  if (type === 'TRANSFER') {
    return JSON.stringify({
      api_version: '1.0',
      event: {
        id: options.id ?? randomUUID(),
        type,
        app_id: 'app-1',
        event_timestamp_ms: Date.now(),
        store: 'APP_STORE',
        environment: options.environment ?? 'PRODUCTION',
        transferred_from: options.transferredFrom ?? [],
        transferred_to: options.transferredTo ?? [],
      },
    });
  }
  const userId = options.userId ?? 'user-1';
  return JSON.stringify({
    api_version: '1.0',
    event: {
      id: options.id ?? randomUUID(),
      type,
      app_id: 'app-1',
      app_user_id: userId,
      original_app_user_id: options.originalAppUserId ?? userId,
      aliases: options.aliases ?? [userId],
      product_id: options.productId ?? 'premium.monthly',
      period_type: 'NORMAL',
      purchased_at_ms: Date.now() - 1_000,
      expiration_at_ms: Date.now() + 30 * 24 * 3600_000,
      event_timestamp_ms: Date.now(),
      ...(options.environment === null ? {} : { environment: options.environment ?? 'PRODUCTION' }),
      store: 'APP_STORE',
      transaction_id: randomUUID(),
      original_transaction_id: '1000000000',
      price: 9.99,
      currency: 'USD',
    },
  });
}
