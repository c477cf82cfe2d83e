/**
 * RevenueCat's REST v1, as Tally uses it. `GET /v1/subscribers/{id}` gets *or creates*: callers
 * only pass ids RevenueCat itself sent or that Tally has already seen.
 */
export interface RevenueCatApi {
  /**
   * The subscriber's current state. Throws RetryLaterError on 429 (delay from Retry-After), a
   * retryable BillingError on 5xx, a timeout or a network failure, a non-retryable one on other
   * 4xx answers.
   */
  getSubscriber(appUserId: string): Promise<RevenueCatSubscriberRead>;
}

/** One answer of `GET /v1/subscribers/{id}`. */
export interface RevenueCatSubscriberRead {
  /** RevenueCat's `request_date_ms`: when this state was true (orders concurrent reads). */
  requestDateMs: number;
  /** True when RevenueCat answered 201: the read created the customer. */
  created: boolean;
  subscriber: RevenueCatSubscriber;
}

export interface RevenueCatSubscription {
  expires_date: string | null;
  purchase_date?: string | null;
  store?: string | null;
  is_sandbox?: boolean | null;
  unsubscribe_detected_at?: string | null;
  billing_issues_detected_at?: string | null;
  grace_period_expires_date?: string | null;
  refunded_at?: string | null;
  period_type?: string | null;
  ownership_type?: string | null;
}

export interface RevenueCatSubscriber {
  original_app_user_id: string;
  subscriptions: Record<string, RevenueCatSubscription>;
  entitlements?: Record<string, { expires_date: string | null; product_identifier: string; purchase_date?: string }>;
  /** Consumables by product id; a token pack purchase is confirmed by its `store_transaction_id`. */
  non_subscriptions?: Record<
    string,
    { id: string; purchase_date?: string; store?: string; store_transaction_id?: string | null }[]
  >;
}
