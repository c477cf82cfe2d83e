/**
 * RevenueCat's REST v1, as Tally uses it. `GET /v1/subscribers/{id}` gets *or creates*: callers
 * only pass ids RevenueCat itself sent or that Tally has already seen.
 */
export interface RevenueCatApi {
  /** The subscriber's current state. Throws RetryLaterError on 429, a retryable error on 5xx. */
  getSubscriber(appUserId: string): Promise<RevenueCatSubscriber>;
}

export interface RevenueCatSubscription {
  expires_date: string | null;
  purchase_date?: string | null;
  store?: string | null;
  is_sandbox?: boolean | null;
  unsubscribe_detected_at?: string | null;
  billing_issues_detected_at?: string | null;
  refunded_at?: string | null;
  period_type?: string | null;
  ownership_type?: string | null;
}

export interface RevenueCatSubscriber {
  original_app_user_id: string;
  subscriptions: Record<string, RevenueCatSubscription>;
  entitlements?: Record<string, { expires_date: string | null; product_identifier: string; purchase_date?: string }>;
  non_subscriptions?: Record<string, { id: string; purchase_date?: string; store?: string }[]>;
}
