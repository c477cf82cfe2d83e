import createClient, { type Client, type ClientOptions } from 'openapi-fetch';
import { Webhook } from 'standardwebhooks';
import type { paths, webhooks } from './api-types';

export type { paths, webhooks } from './api-types';

/** The typed client of the Tally API: `client.GET('/v1/users/{userId}/wallet', { params: { path: { userId } } })`. */
export type TallyClient = Client<paths>;

export interface TallyClientOptions {
  /** The api's origin, e.g. `http://127.0.0.1:3001`. */
  baseUrl: string;
  /** An app key (APP_API_KEYS) for /v1, or an admin key (ADMIN_API_KEYS) for /admin. */
  apiKey: string;
  /** Another fetch (tests, a proxy); the global one otherwise. */
  fetch?: ClientOptions['fetch'];
  /** Headers sent with every request (an X-Request-Id of the caller's own, say). */
  headers?: Record<string, string>;
}

/**
 * A client of the api, typed from its OpenAPI document (openapi-fetch over the generated
 * `paths`): every call answers `{ data, error, response }`, `data` typed by the 2xx answer and
 * `error` by the error answers (`{"error":{"code","message"}}`, codes listed per route).
 */
export function createTallyClient(options: TallyClientOptions): TallyClient {
  return createClient<paths>({
    baseUrl: options.baseUrl,
    headers: { ...options.headers, authorization: `Bearer ${options.apiKey}` },
    ...(options.fetch ? { fetch: options.fetch } : {}),
  });
}

/** One outbound message as the app receives it: `{type, timestamp, data}`, typed by its type. */
export type AppWebhookEvent = {
  [Type in keyof webhooks]: webhooks[Type]['post']['requestBody']['content']['application/json'];
}[keyof webhooks];

/** The delivery was not signed by any of the secrets, its timestamp is stale, or it is not a message. */
export class AppWebhookVerificationError extends Error {
  override readonly name = 'AppWebhookVerificationError';
}

type IncomingHeaders = Headers | Record<string, string | string[] | undefined>;

function headerRecord(headers: IncomingHeaders): Record<string, string> {
  const record: Record<string, string> = {};
  const entries = headers instanceof Headers ? [...headers.entries()] : Object.entries(headers);
  for (const [name, value] of entries) {
    if (value === undefined) continue;
    record[name.toLowerCase()] = Array.isArray(value) ? value.join(', ') : value;
  }
  return record;
}

/**
 * Verifies a delivery of Tally's app webhooks (Standard Webhooks, through the `standardwebhooks`
 * library) and returns its typed event. `body` is the raw body exactly as received; `headers`
 * carry webhook-id, webhook-timestamp and webhook-signature; `secrets` are the `whsec_…` values
 * of APP_WEBHOOK_SECRETS the app accepts (during a rotation, the old and the new). Throws
 * AppWebhookVerificationError for a body no secret signed or a stale timestamp. Deduplicate on
 * `webhook-id`: a message may arrive more than once.
 */
export function verifyAppWebhook(
  body: string | Uint8Array,
  headers: IncomingHeaders,
  secrets: readonly string[],
): AppWebhookEvent {
  const payload = typeof body === 'string' ? body : new TextDecoder().decode(body);
  const record = headerRecord(headers);
  let lastError: unknown;
  for (const secret of secrets) {
    try {
      // guard: client-webhook-verify
      const event = new Webhook(secret).verify(payload, record) as Partial<AppWebhookEvent> | null;
      if (!event || typeof event.type !== 'string' || typeof event.data !== 'object' || event.data === null) {
        throw new AppWebhookVerificationError('the delivery is not a Tally message ({type, timestamp, data})');
      }
      return event as AppWebhookEvent;
    } catch (error) {
      if (error instanceof AppWebhookVerificationError) throw error;
      lastError = error;
    }
  }
  throw new AppWebhookVerificationError(
    `no secret verifies this delivery${lastError instanceof Error ? `: ${lastError.message}` : ''}`,
  );
}
