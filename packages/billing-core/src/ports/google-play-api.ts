/**
 * The Play Developer API (androidpublisher v3) as Tally uses it, for the one app of
 * GOOGLE_PLAY_PACKAGE_NAME, authenticated as the service account of
 * GOOGLE_SERVICE_ACCOUNT_KEY_PATH. Failures are typed for the inbox engine and the loops: 429 →
 * RetryLaterError, 5xx / timeout / network / unreadable answer → a retryable BillingError
 * (`google_play_unavailable`), 404 on a purchase → PurchaseNotFoundError, other 4xx → a
 * non-retryable `google_play_rejected`.
 */
export interface GooglePlayApi {
  readonly packageName: string;
  /** `purchases.products.get`: a one-time product purchase as Google has it now. */
  getProductPurchase(productId: string, purchaseToken: string): Promise<GooglePlayProductPurchase>;
  /** `purchases.products.consume`: marks it consumed (no automatic refund after three days). */
  consumeProductPurchase(productId: string, purchaseToken: string): Promise<void>;
  /** `purchases.voidedpurchases.list`: one page of the purchases voided since `startTimeMillis`. */
  listVoidedPurchases(query: { startTimeMillis: number; pageToken?: string }): Promise<GooglePlayVoidedPurchasesPage>;
  /** `purchases.subscriptionsv2.get`: a subscription purchase as Google has it now. */
  getSubscriptionPurchase(purchaseToken: string): Promise<GooglePlaySubscriptionPurchase>;
}

/** The fields of a ProductPurchase Tally reads (Google's names; numbers as Google sends them). */
export interface GooglePlayProductPurchase {
  /** 0 purchased, 1 canceled, 2 pending. */
  purchaseState: number;
  /** 0 yet to be consumed, 1 consumed. */
  consumptionState: number;
  acknowledgementState?: number | undefined;
  orderId?: string | undefined;
  /** What the app passed to Play Billing as its obfuscated account id (Tally's store-accounts value). */
  obfuscatedExternalAccountId?: string | undefined;
  /** Absent for a real purchase; 0 test (licence tester), 1 promo, 2 rewarded. */
  purchaseType?: number | undefined;
  /** Units bought in one purchase (multi-quantity); absent means 1. */
  quantity?: number | undefined;
  purchaseTimeMillis?: string | undefined;
}

export interface GooglePlayVoidedPurchase {
  purchaseToken: string;
  orderId: string;
  voidedTimeMillis?: string | undefined;
  /** Who voided it: 0 the user, 1 the developer, 2 Google. */
  voidedSource?: number | undefined;
  voidedReason?: number | undefined;
}

export interface GooglePlayVoidedPurchasesPage {
  voidedPurchases: GooglePlayVoidedPurchase[];
  nextPageToken?: string | undefined;
}

/** The parts of a SubscriptionPurchaseV2 Tally reads. */
export interface GooglePlaySubscriptionPurchase {
  /** SUBSCRIPTION_STATE_ACTIVE, _IN_GRACE_PERIOD, _ON_HOLD, _PAUSED, _CANCELED, _EXPIRED, _PENDING, … */
  subscriptionState: string;
  /** Present (an empty object) for a licence tester's subscription. */
  testPurchase?: Record<string, unknown> | undefined;
  externalAccountIdentifiers?: { obfuscatedExternalAccountId?: string | undefined } | undefined;
  lineItems: {
    productId: string;
    expiryTime?: string | undefined;
    autoRenewingPlan?: { autoRenewEnabled?: boolean | undefined } | undefined;
    offerDetails?: { basePlanId?: string | undefined } | undefined;
  }[];
}
