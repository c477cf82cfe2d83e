// RevenueCat NON_RENEWING_PURCHASE events of the catalog's 100-token pack (product tokens.100),
// in the shape RevenueCat sends; the webhook's Authorization header is the configured value.
export function revenueCatTokenPackEvents({ tag, count, users, userPrefix = 'bench-user' }) {
  const now = Date.now();
  const out = new Array(count);
  for (let i = 0; i < count; i += 1) {
    const userId = `${userPrefix}-${i % users}`;
    const body = JSON.stringify({
      api_version: '1.0',
      event: {
        id: `rcevt_${tag}_${i}`,
        type: 'NON_RENEWING_PURCHASE',
        app_id: 'app-bench',
        app_user_id: userId,
        original_app_user_id: userId,
        aliases: [userId],
        product_id: 'tokens.100',
        period_type: 'NORMAL',
        purchased_at_ms: now - 1_000,
        event_timestamp_ms: now,
        environment: 'PRODUCTION',
        store: 'APP_STORE',
        transaction_id: `rctx_${tag}_${i}`,
        price: 4.99,
        currency: 'USD',
      },
    });
    out[i] = { body, userId };
  }
  return out;
}
