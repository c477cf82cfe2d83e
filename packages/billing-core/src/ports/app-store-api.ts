import type { PaymentEnvironment } from '../db/schema';
import type { AppleRenewalInfo, AppleTransaction } from '../provider-data/apple-signed-data';

/**
 * The body of Send Consumption Information (`PUT /inApps/v2/transactions/consumption/{id}`,
 * Apple's ConsumptionRequest). `customerConsented` must be true (Apple answers 400 otherwise):
 * Tally sends only for users who consented in the app.
 */
export interface AppleConsumptionInformation {
  customerConsented: true;
  /** Milliunits of the purchase consumed, 0 to 100000 (the share of the pack's lot spent); omitted when unknown. */
  consumptionPercentage?: number;
  deliveryStatus: 'DELIVERED';
  sampleContentProvided: boolean;
}

/** One subscription of `GET /inApps/v1/subscriptions/{originalTransactionId}`, its infos decoded. */
export interface AppleSubscriptionStatus {
  /** Apple's status: 1 active, 2 expired, 3 billing retry, 4 grace period, 5 revoked. */
  status: number;
  transaction: AppleTransaction;
  renewalInfo: AppleRenewalInfo | null;
}

/** The timespan of a Get Notification History request (NotificationHistoryRequest), in Unix milliseconds. */
export interface AppleNotificationHistoryRequest {
  startDate: number;
  endDate: number;
}

/** One page of Get Notification History (NotificationHistoryResponse): at most 20 notifications. */
export interface AppleNotificationHistoryPage {
  /**
   * Each notification's `signedPayload` as Apple listed it (null when the record carried none):
   * NOT verified; the caller verifies each as ingest verifies a delivery.
   */
  signedPayloads: (string | null)[];
  /** The next page's token while Apple has more; null on the last page. */
  paginationToken: string | null;
}

/**
 * The App Store Server API, as Tally uses it: a JWT (ES256, the In-App Purchase key) on every
 * request, the host by environment (production or sandbox). Each method throws RetryLaterError
 * on 429 (delay from Retry-After), a retryable BillingError (`apple_unavailable`) on 5xx, a
 * timeout or a network failure, and a non-retryable one (`apple_rejected`) on other 4xx answers.
 */
export interface AppStoreApi {
  /** Resolves once Apple answered 2xx. */
  sendConsumptionInformation(
    environment: PaymentEnvironment,
    transactionId: string,
    body: AppleConsumptionInformation,
  ): Promise<void>;
  /** Every subscription of the customer's subscription groups, with its last transaction and renewal info. */
  getSubscriptionStatuses(
    environment: PaymentEnvironment,
    originalTransactionId: string,
  ): Promise<AppleSubscriptionStatus[]>;
  /**
   * One page of Get Notification History (`POST /inApps/v1/notifications/history`): the
   * notifications Apple attempted to send in the timespan, delivered or not. Pass the previous
   * page's `paginationToken` for the next one.
   */
  getNotificationHistory(
    environment: PaymentEnvironment,
    request: AppleNotificationHistoryRequest,
    paginationToken?: string,
  ): Promise<AppleNotificationHistoryPage>;
}
