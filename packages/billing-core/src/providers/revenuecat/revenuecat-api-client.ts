import { z } from 'zod';
import { BillingError, RetryLaterError } from '../../errors';
import type { RevenueCatApi, RevenueCatSubscriberRead } from '../../ports/revenuecat-api';

export interface RevenueCatApiClientOptions {
  /** Secret API key (`REVENUECAT_API_KEY`), sent as `Authorization: Bearer <key>`. */
  apiKey: string;
  /** Origin of the REST API (`REVENUECAT_API_BASE_URL`); `/v1/...` is appended. */
  baseUrl: string;
  /** Each request is abandoned after this long (`REVENUECAT_API_TIMEOUT_MS`). */
  timeoutMs: number;
  /** Clock for Retry-After HTTP dates. */
  now?: () => number;
  /**
   * Called when RevenueCat answered 201: its read is get-or-create, so it has just created a
   * customer for an id it did not know. Tally only reads ids RevenueCat sent, so this should
   * never happen; the apps log it at warn and count it.
   */
  onCustomerCreated?: (appUserId: string) => void;
}

/** RevenueCat could not be reached or failed (5xx, timeout, network, unreadable answer): retried with backoff. */
export class RevenueCatUnavailableError extends BillingError {
  constructor(message: string, cause?: unknown) {
    super('revenuecat_unavailable', message, { retryable: true, cause });
  }
}

/** RevenueCat refused the request (4xx other than 429): a key or configuration problem; parks. */
export class RevenueCatRequestRejectedError extends BillingError {
  constructor(
    readonly status: number,
    message: string,
  ) {
    super('revenuecat_rejected', message, { retryable: false });
  }
}

const nullableString = z.string().nullish();

const subscriptionSchema = z.looseObject({
  expires_date: nullableString.transform((value) => value ?? null),
  purchase_date: nullableString,
  store: nullableString,
  is_sandbox: z.boolean().nullish(),
  unsubscribe_detected_at: nullableString,
  billing_issues_detected_at: nullableString,
  grace_period_expires_date: nullableString,
  refunded_at: nullableString,
  period_type: nullableString,
  ownership_type: nullableString,
});

const subscriberResponseSchema = z.looseObject({
  request_date_ms: z.number().int().nonnegative().optional(),
  subscriber: z.looseObject({
    original_app_user_id: z.string(),
    subscriptions: z.record(z.string(), subscriptionSchema).nullish(),
    entitlements: z
      .record(
        z.string(),
        z.looseObject({
          expires_date: nullableString.transform((value) => value ?? null),
          product_identifier: z.string(),
          purchase_date: z.string().optional(),
        }),
      )
      .nullish(),
    non_subscriptions: z
      .record(
        z.string(),
        z.array(
          z.looseObject({
            id: z.string(),
            purchase_date: z.string().optional(),
            store: z.string().optional(),
            store_transaction_id: z.string().nullish(),
          }),
        ),
      )
      .nullish(),
  }),
});

/**
 * The delay a `Retry-After` header asks for, in milliseconds: either delta-seconds or an HTTP
 * date. Undefined when absent or unreadable (the engine then picks a growing delay).
 */
export function parseRetryAfterMs(header: string | null, now: number = Date.now()): number | undefined {
  if (header === null) return undefined;
  const value = header.trim();
  if (/^\d+$/.test(value)) return Number(value) * 1000;
  const date = Date.parse(value);
  if (Number.isNaN(date)) return undefined;
  return Math.max(0, date - now);
}

/**
 * RevenueCat REST v1 client over fetch. Ids are URL-encoded (`$RCAnonymousID:…`, slashes), every
 * request has a timeout, and failures are typed for the inbox engine: 429 → RetryLaterError
 * with the Retry-After delay (does not spend the failure budget), 5xx / timeout / network /
 * unreadable body → RevenueCatUnavailableError (retried with backoff), other 4xx →
 * RevenueCatRequestRejectedError (parks: fix the key, then requeue).
 */
export function createRevenueCatApiClient(options: RevenueCatApiClientOptions): RevenueCatApi {
  const baseUrl = options.baseUrl.replace(/\/+$/, '');
  const { timeoutMs } = options;
  const now = options.now ?? Date.now;

  return {
    async getSubscriber(appUserId: string): Promise<RevenueCatSubscriberRead> {
      const url = `${baseUrl}/v1/subscribers/${encodeURIComponent(appUserId)}`;
      let response: Response;
      try {
        response = await fetch(url, {
          method: 'GET',
          headers: { authorization: `Bearer ${options.apiKey}`, accept: 'application/json' },
          signal: AbortSignal.timeout(timeoutMs),
        });
      } catch (error) {
        // AbortSignal.timeout rejects with a DOMException named TimeoutError (not always an Error).
        const name = (error as { name?: unknown } | null)?.name;
        const reason =
          name === 'TimeoutError' || name === 'AbortError'
            ? `no answer within ${timeoutMs} ms`
            : `network error: ${error instanceof Error ? error.message : String(error)}`;
        throw new RevenueCatUnavailableError(`RevenueCat GET /v1/subscribers: ${reason}`, error);
      }
      if (response.status === 429) {
        await response.body?.cancel().catch(() => undefined);
        throw new RetryLaterError('RevenueCat rate limit (429)', {
          delayMs: parseRetryAfterMs(response.headers.get('retry-after'), now()),
        });
      }
      if (response.status >= 500) {
        await response.body?.cancel().catch(() => undefined);
        throw new RevenueCatUnavailableError(`RevenueCat GET /v1/subscribers answered ${response.status}`);
      }
      if (response.status !== 200 && response.status !== 201) {
        await response.body?.cancel().catch(() => undefined);
        throw new RevenueCatRequestRejectedError(
          response.status,
          `RevenueCat GET /v1/subscribers answered ${response.status}`,
        );
      }
      let json: unknown;
      try {
        json = await response.json();
      } catch (error) {
        throw new RevenueCatUnavailableError('RevenueCat GET /v1/subscribers: body is not JSON', error);
      }
      const parsed = subscriberResponseSchema.safeParse(json);
      if (!parsed.success) {
        const issue = parsed.error.issues[0];
        throw new RevenueCatUnavailableError(
          `RevenueCat GET /v1/subscribers: unexpected body (${issue ? `${issue.path.join('.')}: ${issue.message}` : 'invalid'})`,
        );
      }
      const { subscriber } = parsed.data;
      const created = response.status === 201;
      if (created) options.onCustomerCreated?.(appUserId);
      return {
        requestDateMs: parsed.data.request_date_ms ?? now(),
        created,
        subscriber: {
          ...subscriber,
          subscriptions: subscriber.subscriptions ?? {},
          ...(subscriber.entitlements ? { entitlements: subscriber.entitlements } : {}),
          ...(subscriber.non_subscriptions ? { non_subscriptions: subscriber.non_subscriptions } : {}),
        } as RevenueCatSubscriberRead['subscriber'],
      };
    },
  };
}
