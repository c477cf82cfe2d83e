/** One signed POST of an app webhook message to `APP_WEBHOOK_URL`. */
export interface AppWebhookDelivery {
  /** The `webhook-id` header: the same on every attempt of a message. */
  webhookId: string;
  /** The exact body, signed as sent. */
  body: string;
}

export type AppWebhookAttempt =
  /** A 2xx within the timeout. */
  | { kind: 'delivered'; statusCode: number }
  /** Any other answer; `bodyExcerpt` is the start of the response body, for last_error (never logged). */
  | { kind: 'rejected'; statusCode: number; bodyExcerpt: string }
  /** No answer: connection refused or broken, or the timeout passed. */
  | { kind: 'unreachable'; error: string };

/** The app's webhook endpoint (Tally is its client). Never throws: every outcome is an attempt. */
export interface AppWebhookSender {
  send(delivery: AppWebhookDelivery): Promise<AppWebhookAttempt>;
}
