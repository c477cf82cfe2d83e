import { createPrivateKey, type KeyObject, sign } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { z } from 'zod';
import type { PaymentEnvironment } from '../../db/schema';
import { BillingError, RetryLaterError } from '../../errors';
import type {
  AppleConsumptionInformation,
  AppleNotificationHistoryPage,
  AppleSubscriptionStatus,
  AppStoreApi,
} from '../../ports/app-store-api';
import {
  appleRenewalInfoSchema,
  appleTransactionSchema,
  decodeJwsPayload,
  parseDecoded,
} from '../../provider-data/apple-signed-data';
import { parseRetryAfterMs } from '../revenuecat/revenuecat-api-client';

export interface AppStoreApiClientOptions {
  /** The In-App Purchase key's Key ID (`APPLE_KEY_ID`): the JWT header's `kid`. */
  keyId: string;
  /** The Issuer ID (`APPLE_ISSUER_ID`): the JWT's `iss`. */
  issuerId: string;
  /** The app's bundle id (`APPLE_BUNDLE_ID`): the JWT's `bid`. */
  bundleId: string;
  /** The `.p8` key's PEM text (read from `APPLE_PRIVATE_KEY_PATH` by the composition root). */
  privateKeyPem: string;
  /** `APPLE_API_BASE_URL`: one origin for both environments (a local fake); Apple's own by default. */
  baseUrl?: string | undefined;
  timeoutMs: number;
  now?: () => number;
}

/** Apple's API origins by environment. */
export const appStoreApiOrigins: Record<PaymentEnvironment, string> = {
  production: 'https://api.storekit.itunes.apple.com',
  sandbox: 'https://api.storekit-sandbox.itunes.apple.com',
};

/** How long a token lives (Apple refuses more than 60 minutes) and how early a new one is made. */
const TOKEN_LIFETIME_S = 20 * 60;
const TOKEN_RENEW_BEFORE_S = 5 * 60;

/** The App Store Server API could not be reached or failed (5xx, timeout, network, unreadable answer): retried. */
export class AppleUnavailableError extends BillingError {
  constructor(message: string, cause?: unknown) {
    super('apple_unavailable', message, { retryable: true, cause });
  }
}

/** The App Store Server API refused the request (4xx other than 429): a key, issuer or request problem. */
export class AppleRequestRejectedError extends BillingError {
  constructor(
    readonly status: number,
    message: string,
  ) {
    super('apple_rejected', message, { retryable: false });
  }
}

const statusesSchema = z.looseObject({
  data: z.array(
    z.looseObject({
      lastTransactions: z.array(
        z.looseObject({
          status: z.number().int(),
          signedTransactionInfo: z.string(),
          signedRenewalInfo: z.string().nullish(),
        }),
      ),
    }),
  ),
});

const historySchema = z.looseObject({
  notificationHistory: z.array(z.looseObject({ signedPayload: z.string().min(1).nullish() })).default([]),
  hasMore: z.boolean().nullish(),
  paginationToken: z.string().nullish(),
});

/**
 * The ES256 JWT Apple's API takes (header `kid`; claims `iss`, `iat`, `exp`, `aud`
 * `appstoreconnect-v1`, `bid`), signed with node:crypto (IEEE P1363 signature, as JWS wants).
 */
export function appStoreApiToken(
  options: { keyId: string; issuerId: string; bundleId: string; key: KeyObject },
  nowSeconds: number,
): string {
  const encode = (value: object) => Buffer.from(JSON.stringify(value)).toString('base64url');
  const header = encode({ alg: 'ES256', kid: options.keyId, typ: 'JWT' });
  const payload = encode({
    iss: options.issuerId,
    iat: nowSeconds,
    exp: nowSeconds + TOKEN_LIFETIME_S,
    aud: 'appstoreconnect-v1',
    bid: options.bundleId,
  });
  const signature = sign('sha256', Buffer.from(`${header}.${payload}`), {
    key: options.key,
    dsaEncoding: 'ieee-p1363',
  }).toString('base64url');
  return `${header}.${payload}.${signature}`;
}

/**
 * The App Store Server API over fetch. Failures are typed for the inbox engine and the
 * consumption loop: 429 → RetryLaterError (Retry-After), 5xx / timeout / network / unreadable
 * body → AppleUnavailableError, other 4xx → AppleRequestRejectedError.
 */
export function createAppStoreApiClient(options: AppStoreApiClientOptions): AppStoreApi {
  const key = createPrivateKey(options.privateKeyPem);
  const now = options.now ?? Date.now;
  let cached: { token: string; renewAt: number } | undefined;
  const token = () => {
    const seconds = Math.floor(now() / 1000);
    if (!cached || seconds >= cached.renewAt) {
      cached = {
        token: appStoreApiToken({ ...options, key }, seconds),
        renewAt: seconds + TOKEN_LIFETIME_S - TOKEN_RENEW_BEFORE_S,
      };
    }
    return cached.token;
  };
  const originOf = (environment: PaymentEnvironment) =>
    (options.baseUrl ?? appStoreApiOrigins[environment]).replace(/\/+$/, '');

  /**
   * One request; `what` (errors and logs) names the path without its last segment when that is an
   * id, and never the query (a pagination token).
   */
  async function request(
    environment: PaymentEnvironment,
    method: 'GET' | 'PUT' | 'POST',
    path: string,
    { body, query, idInPath = true }: { body?: unknown; query?: Record<string, string>; idInPath?: boolean } = {},
  ) {
    const what = `App Store Server API ${method} ${idInPath ? path.replace(/\/[^/]+$/, '/…') : path}`;
    const search = query && Object.keys(query).length > 0 ? `?${new URLSearchParams(query)}` : '';
    let response: Response;
    try {
      response = await fetch(`${originOf(environment)}${path}${search}`, {
        method,
        headers: {
          authorization: `Bearer ${token()}`,
          accept: 'application/json',
          ...(body === undefined ? {} : { 'content-type': 'application/json' }),
        },
        ...(body === undefined ? {} : { body: JSON.stringify(body) }),
        signal: AbortSignal.timeout(options.timeoutMs),
      });
    } catch (error) {
      const name = (error as { name?: unknown } | null)?.name;
      const reason =
        name === 'TimeoutError' || name === 'AbortError'
          ? `no answer within ${options.timeoutMs} ms`
          : `network error: ${error instanceof Error ? error.message : String(error)}`;
      throw new AppleUnavailableError(`${what}: ${reason}`, error);
    }
    if (response.status === 429) {
      await response.body?.cancel().catch(() => undefined);
      throw new RetryLaterError(`${what}: rate limit (429)`, {
        delayMs: parseRetryAfterMs(response.headers.get('retry-after'), now()),
      });
    }
    if (response.status >= 500) {
      await response.body?.cancel().catch(() => undefined);
      throw new AppleUnavailableError(`${what} answered ${response.status}`);
    }
    if (response.status < 200 || response.status > 299) {
      // Apple's error body: {errorCode, errorMessage}; kept short in the message.
      const text = (await response.text().catch(() => '')).slice(0, 300);
      throw new AppleRequestRejectedError(response.status, `${what} answered ${response.status} ${text}`.trim());
    }
    return { response, what };
  }

  return {
    async sendConsumptionInformation(environment, transactionId, body: AppleConsumptionInformation) {
      const path = `/inApps/v2/transactions/consumption/${encodeURIComponent(transactionId)}`;
      const { response } = await request(environment, 'PUT', path, { body });
      await response.body?.cancel().catch(() => undefined);
    },
    async getSubscriptionStatuses(environment, originalTransactionId): Promise<AppleSubscriptionStatus[]> {
      const path = `/inApps/v1/subscriptions/${encodeURIComponent(originalTransactionId)}`;
      const { response, what } = await request(environment, 'GET', path);
      let json: unknown;
      try {
        json = await response.json();
      } catch (error) {
        throw new AppleUnavailableError(`${what}: body is not JSON`, error);
      }
      const parsed = statusesSchema.safeParse(json);
      if (!parsed.success) throw new AppleUnavailableError(`${what}: unexpected body`);
      try {
        return parsed.data.data.flatMap((group) =>
          group.lastTransactions.map((last) => ({
            status: last.status,
            transaction: parseDecoded(
              appleTransactionSchema,
              decodeJwsPayload(last.signedTransactionInfo, 'signedTransactionInfo'),
              'an App Store transaction',
            ),
            renewalInfo: last.signedRenewalInfo
              ? parseDecoded(
                  appleRenewalInfoSchema,
                  decodeJwsPayload(last.signedRenewalInfo, 'signedRenewalInfo'),
                  'an App Store renewal info',
                )
              : null,
          })),
        );
      } catch (error) {
        throw new AppleUnavailableError(`${what}: unreadable signed data`, error);
      }
    },
    async getNotificationHistory(environment, timespan, paginationToken): Promise<AppleNotificationHistoryPage> {
      const { response, what } = await request(environment, 'POST', '/inApps/v1/notifications/history', {
        body: { startDate: timespan.startDate, endDate: timespan.endDate },
        query: paginationToken === undefined ? {} : { paginationToken },
        idInPath: false,
      });
      let json: unknown;
      try {
        json = await response.json();
      } catch (error) {
        throw new AppleUnavailableError(`${what}: body is not JSON`, error);
      }
      const parsed = historySchema.safeParse(json);
      if (!parsed.success) throw new AppleUnavailableError(`${what}: unexpected body`);
      const { notificationHistory, hasMore, paginationToken: next } = parsed.data;
      return {
        signedPayloads: notificationHistory.map((item) => item.signedPayload ?? null),
        paginationToken: hasMore && next ? next : null,
      };
    },
  };
}

/**
 * The App Store Server API client of a process's configuration, or undefined while any of the key
 * id, issuer id, key path and bundle id is unset (production refuses half of them at parse, see
 * platform's appleConfigurationProblems). Reads the key at start: a path that cannot be read
 * stops the process, never an event.
 */
export function appStoreApiClientOf(config: {
  APPLE_KEY_ID?: string | undefined;
  APPLE_ISSUER_ID?: string | undefined;
  APPLE_PRIVATE_KEY_PATH?: string | undefined;
  APPLE_BUNDLE_ID?: string | undefined;
  APPLE_API_BASE_URL?: string | undefined;
  APPLE_API_TIMEOUT_MS: number;
}): AppStoreApi | undefined {
  const { APPLE_KEY_ID: keyId, APPLE_ISSUER_ID: issuerId, APPLE_PRIVATE_KEY_PATH: keyPath } = config;
  const bundleId = config.APPLE_BUNDLE_ID;
  if (keyId === undefined || issuerId === undefined || keyPath === undefined || bundleId === undefined)
    return undefined;
  return createAppStoreApiClient({
    keyId,
    issuerId,
    bundleId,
    privateKeyPem: readFileSync(keyPath, 'utf8'),
    baseUrl: config.APPLE_API_BASE_URL,
    timeoutMs: config.APPLE_API_TIMEOUT_MS,
  });
}
