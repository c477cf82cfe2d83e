/**
 * Whether the app's webhook messages are delivered, as this api is configured: `on` with
 * APP_WEBHOOK_URL, `not_configured` without it. Without it messages are still written (each with
 * its change, so setting the URL later delivers the recent history, docs/app-webhooks.md), but a
 * pending one waits for the URL, not for a retry: the console and the admin API say so instead of
 * showing it pending with a growing age. The api reads its own APP_WEBHOOK_URL, which the docs
 * (and the shared ConfigMap) set alike on the api and the workers.
 */
export const appWebhookDeliveries = ['on', 'not_configured'] as const;
export type AppWebhookDelivery = (typeof appWebhookDeliveries)[number];

export const appWebhookDeliveryOf = (appWebhookUrl: string | undefined): AppWebhookDelivery =>
  appWebhookUrl === undefined ? 'not_configured' : 'on';

/** What an operator reads where a message's delivery is shown while it is not configured. */
export const notConfiguredNote = 'not delivered: APP_WEBHOOK_URL is not set (messages are written, not sent)';
