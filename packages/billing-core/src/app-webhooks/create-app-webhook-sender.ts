import { Webhook } from 'standardwebhooks';
import type { AppWebhookSender } from '../ports/app-webhook-sender';

export interface AppWebhookSenderOptions {
  /** APP_WEBHOOK_URL. */
  url: string;
  /** APP_WEBHOOK_SECRETS: `whsec_…` values; every one signs every attempt (rotation). */
  secrets: readonly string[];
  /** APP_WEBHOOK_TIMEOUT_MS: connect to the end of the answer's headers. */
  timeoutMs: number;
  /** The wall clock of `webhook-timestamp` (the receiver compares it with its own). */
  now?: () => Date;
}

/** How much of a non-2xx answer's body last_error keeps. */
export const RESPONSE_EXCERPT_BYTES = 500;

/**
 * POSTs messages signed per the Standard Webhooks specification with its reference library:
 * `webhook-id`, `webhook-timestamp` (Unix seconds of this attempt) and `webhook-signature`, one
 * `v1,<base64 HMAC-SHA256 of id.timestamp.body>` per secret, separated by single spaces (the
 * delimiter the specification and the library's verify use). Redirects are not followed (a 3xx is
 * not a delivery). Throws at construction on a secret the library cannot decode.
 */
export function createAppWebhookSender(options: AppWebhookSenderOptions): AppWebhookSender {
  if (options.secrets.length === 0) throw new Error('an app webhook sender needs at least one secret');
  const signers = options.secrets.map((secret) => new Webhook(secret));
  const now = options.now ?? (() => new Date());
  return {
    async send(delivery) {
      const timestamp = now();
      const signature = signers.map((signer) => signer.sign(delivery.webhookId, timestamp, delivery.body)).join(' ');
      const signal = AbortSignal.timeout(options.timeoutMs);
      try {
        const response = await fetch(options.url, {
          method: 'POST',
          headers: {
            'content-type': 'application/json',
            'user-agent': 'Tally-Webhooks/1',
            'webhook-id': delivery.webhookId,
            'webhook-timestamp': String(Math.floor(timestamp.getTime() / 1000)),
            'webhook-signature': signature,
          },
          body: delivery.body,
          redirect: 'manual',
          signal,
        });
        if (response.status >= 200 && response.status < 300) {
          await response.body?.cancel().catch(() => undefined);
          return { kind: 'delivered', statusCode: response.status };
        }
        return { kind: 'rejected', statusCode: response.status, bodyExcerpt: await readExcerpt(response) };
      } catch (error) {
        if (signal.aborted) return { kind: 'unreachable', error: `no answer within ${options.timeoutMs} ms` };
        return { kind: 'unreachable', error: describe(error) };
      }
    },
  };
}

/** The first bytes of a body, without reading the rest (a huge or endless body costs nothing). */
async function readExcerpt(response: Response): Promise<string> {
  const reader = response.body?.getReader();
  if (!reader) return '';
  const chunks: Uint8Array[] = [];
  let length = 0;
  try {
    while (length < RESPONSE_EXCERPT_BYTES) {
      const { done, value } = await reader.read();
      if (done) break;
      chunks.push(value);
      length += value.length;
    }
  } catch {
    // The body broke off or the timeout passed: keep what arrived.
  } finally {
    await reader.cancel().catch(() => undefined);
  }
  return Buffer.concat(chunks).subarray(0, RESPONSE_EXCERPT_BYTES).toString('utf8');
}

/** The error and its causes' codes (`fetch failed (ECONNREFUSED)`), never a header or a body. */
function describe(error: unknown): string {
  const codes: string[] = [];
  let current: unknown = error;
  for (let depth = 0; current && typeof current === 'object' && depth < 4; depth += 1) {
    const code = (current as { code?: unknown }).code;
    if (typeof code === 'string') codes.push(code);
    current = (current as { cause?: unknown }).cause;
  }
  const message = error instanceof Error ? error.message : String(error);
  return codes.length > 0 ? `${message} (${codes.join(', ')})` : message;
}
