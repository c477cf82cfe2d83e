/**
 * The `webhook-id` of a message: `msg_` and its uuid without dashes. Random rather than the row
 * id, so a restored or rebuilt database never reuses an id the app has already deduplicated.
 */
export function toWebhookId(messageUuid: string): string {
  return `msg_${messageUuid.replaceAll('-', '')}`;
}

/** The message uuid of a `webhook-id` (the admin routes take it); undefined when it is not one. */
export function parseWebhookId(webhookId: string): string | undefined {
  const match = /^msg_([0-9a-f]{8})([0-9a-f]{4})([0-9a-f]{4})([0-9a-f]{4})([0-9a-f]{12})$/i.exec(webhookId);
  return match ? match.slice(1).join('-').toLowerCase() : undefined;
}
