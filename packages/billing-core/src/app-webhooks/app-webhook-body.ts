import type { AppWebhookMessageRow } from '../db/schema';

/**
 * The body POSTed to the app: `{"type", "timestamp" (ISO time of the change), "data"}`. Built from
 * the stored row, so every attempt sends the same bytes (jsonb keeps one key order).
 */
export function toAppWebhookBody(message: Pick<AppWebhookMessageRow, 'type' | 'created_at' | 'data'>): string {
  return JSON.stringify({ type: message.type, timestamp: message.created_at.toISOString(), data: message.data });
}
