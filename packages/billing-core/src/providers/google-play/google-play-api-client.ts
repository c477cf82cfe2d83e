import { z } from 'zod';
import { PurchaseNotFoundError, RetryLaterError } from '../../errors';
import type {
  GooglePlayApi,
  GooglePlayProductPurchase,
  GooglePlaySubscriptionPurchase,
  GooglePlayVoidedPurchasesPage,
} from '../../ports/google-play-api';
import { parseRetryAfterMs } from '../revenuecat/revenuecat-api-client';
import {
  createServiceAccountTokens,
  GooglePlayRequestRejectedError,
  GooglePlayUnavailableError,
  type ServiceAccountKey,
} from './service-account-token';

export interface GooglePlayApiClientOptions {
  packageName: string;
  key: ServiceAccountKey;
  /** GOOGLE_OAUTH_TOKEN_URL (default Google's). */
  tokenUrl: string;
  /** GOOGLE_PLAY_API_BASE_URL: the origin `/androidpublisher/v3/…` is appended to. */
  baseUrl: string;
  /** GOOGLE_PLAY_API_TIMEOUT_MS: each request (and each token grant) is abandoned after this long. */
  timeoutMs: number;
  now?: () => number;
}

/** Google sends int64 fields as strings and small enums as numbers; either is read as a number. */
const int = z.union([
  z.number().int(),
  z
    .string()
    .regex(/^-?\d{1,18}$/)
    .transform(Number),
]);
const optionalText = z
  .string()
  .nullish()
  .transform((value) => value ?? undefined);

const productPurchaseSchema = z.looseObject({
  purchaseState: int.nullish().transform((value) => value ?? 0),
  consumptionState: int.nullish().transform((value) => value ?? 0),
  acknowledgementState: int.nullish().transform((value) => value ?? undefined),
  orderId: optionalText,
  obfuscatedExternalAccountId: optionalText,
  purchaseType: int.nullish().transform((value) => value ?? undefined),
  quantity: int.nullish().transform((value) => value ?? undefined),
  purchaseTimeMillis: z
    .union([z.string(), z.number()])
    .nullish()
    .transform((value) => value?.toString()),
});

const voidedPageSchema = z.looseObject({
  voidedPurchases: z
    .array(
      z.looseObject({
        purchaseToken: z.string().min(1),
        orderId: z.string().min(1),
        voidedTimeMillis: z
          .union([z.string(), z.number()])
          .nullish()
          .transform((value) => value?.toString()),
        voidedSource: int.nullish().transform((value) => value ?? undefined),
        voidedReason: int.nullish().transform((value) => value ?? undefined),
      }),
    )
    .nullish()
    .transform((value) => value ?? []),
  tokenPagination: z.looseObject({ nextPageToken: optionalText }).nullish(),
});

const subscriptionSchema = z.looseObject({
  subscriptionState: z.string().min(1),
  testPurchase: z
    .looseObject({})
    .nullish()
    .transform((value) => value ?? undefined),
  externalAccountIdentifiers: z
    .looseObject({ obfuscatedExternalAccountId: optionalText })
    .nullish()
    .transform((value) => value ?? undefined),
  lineItems: z
    .array(
      z.looseObject({
        productId: z.string().min(1),
        expiryTime: optionalText,
        autoRenewingPlan: z
          .looseObject({
            autoRenewEnabled: z
              .boolean()
              .nullish()
              .transform((value) => value ?? undefined),
          })
          .nullish()
          .transform((value) => value ?? undefined),
        offerDetails: z
          .looseObject({ basePlanId: optionalText })
          .nullish()
          .transform((value) => value ?? undefined),
      }),
    )
    .nullish()
    .transform((value) => value ?? []),
});

/**
 * The Play Developer API over fetch (ports/google-play-api.ts says how failures are typed). Every
 * path segment is URL-encoded; a 401 drops the cached access token so the next call grants anew.
 */
export function createGooglePlayApiClient(options: GooglePlayApiClientOptions): GooglePlayApi {
  const base = `${options.baseUrl.replace(/\/+$/, '')}/androidpublisher/v3/applications/${encodeURIComponent(options.packageName)}`;
  const now = options.now ?? Date.now;
  const tokens = createServiceAccountTokens({
    key: options.key,
    tokenUrl: options.tokenUrl,
    timeoutMs: options.timeoutMs,
    now,
  });

  async function call<S extends z.ZodType>(
    what: string,
    method: 'GET' | 'POST',
    path: string,
    schema: S | null,
  ): Promise<z.output<S> | undefined> {
    const accessToken = await tokens.accessToken();
    let response: Response;
    try {
      response = await fetch(`${base}${path}`, {
        method,
        headers: { authorization: `Bearer ${accessToken}`, accept: 'application/json' },
        signal: AbortSignal.timeout(options.timeoutMs),
      });
    } catch (error) {
      const name = (error as { name?: unknown } | null)?.name;
      const reason =
        name === 'TimeoutError' || name === 'AbortError'
          ? `no answer within ${options.timeoutMs} ms`
          : `network error: ${error instanceof Error ? error.message : String(error)}`;
      throw new GooglePlayUnavailableError(`Google Play ${what}: ${reason}`, error);
    }
    if (response.status === 429) {
      await response.body?.cancel().catch(() => undefined);
      throw new RetryLaterError(`Google Play ${what}: rate limited (429)`, {
        delayMs: parseRetryAfterMs(response.headers.get('retry-after'), now()),
      });
    }
    if (response.status === 401) tokens.forget();
    if (response.status >= 500 || response.status === 401) {
      await response.body?.cancel().catch(() => undefined);
      throw new GooglePlayUnavailableError(`Google Play ${what} answered ${response.status}`);
    }
    if (response.status === 404 || response.status === 410) {
      await response.body?.cancel().catch(() => undefined);
      throw new PurchaseNotFoundError(`Google Play ${what} answered ${response.status}: Google has no such purchase`);
    }
    if (response.status < 200 || response.status > 299) {
      const body = await response.text().catch(() => '');
      throw new GooglePlayRequestRejectedError(
        response.status,
        `Google Play ${what} answered ${response.status}${body ? `: ${body.slice(0, 300)}` : ''}`,
      );
    }
    if (schema === null) {
      await response.body?.cancel().catch(() => undefined);
      return undefined;
    }
    let json: unknown;
    try {
      json = await response.json();
    } catch (error) {
      throw new GooglePlayUnavailableError(`Google Play ${what}: the answer is not JSON`, error);
    }
    const parsed = schema.safeParse(json);
    if (!parsed.success) {
      const issue = parsed.error.issues[0];
      throw new GooglePlayUnavailableError(
        `Google Play ${what}: unexpected answer (${issue ? `${issue.path.join('.')}: ${issue.message}` : 'invalid'})`,
      );
    }
    return parsed.data;
  }

  const product = (productId: string, token: string) =>
    `/purchases/products/${encodeURIComponent(productId)}/tokens/${encodeURIComponent(token)}`;

  return {
    packageName: options.packageName,
    async getProductPurchase(productId, purchaseToken): Promise<GooglePlayProductPurchase> {
      const read = await call(
        'purchases.products.get',
        'GET',
        product(productId, purchaseToken),
        productPurchaseSchema,
      );
      return read as GooglePlayProductPurchase;
    },
    async consumeProductPurchase(productId, purchaseToken) {
      await call('purchases.products.consume', 'POST', `${product(productId, purchaseToken)}:consume`, null);
    },
    async listVoidedPurchases(query): Promise<GooglePlayVoidedPurchasesPage> {
      const params = new URLSearchParams({ startTime: String(query.startTimeMillis), type: '0' });
      if (query.pageToken !== undefined) params.set('token', query.pageToken);
      const page = await call(
        'purchases.voidedpurchases.list',
        'GET',
        `/purchases/voidedpurchases?${params}`,
        voidedPageSchema,
      );
      if (!page) throw new GooglePlayUnavailableError('Google Play purchases.voidedpurchases.list: no answer');
      return { voidedPurchases: page.voidedPurchases, nextPageToken: page.tokenPagination?.nextPageToken };
    },
    async getSubscriptionPurchase(purchaseToken): Promise<GooglePlaySubscriptionPurchase> {
      const read = await call(
        'purchases.subscriptionsv2.get',
        'GET',
        `/purchases/subscriptionsv2/tokens/${encodeURIComponent(purchaseToken)}`,
        subscriptionSchema,
      );
      return read as GooglePlaySubscriptionPurchase;
    },
  };
}
