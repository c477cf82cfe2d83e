import { type Kysely, sql } from 'kysely';
import type { AppWebhookMessageRow, DB } from '../db/schema';

export type RedeliverAppWebhookResult =
  | { kind: 'redelivering'; message: AppWebhookMessageRow }
  /** Still pending: it is already on its way (or waiting out its schedule); nothing changed. */
  | { kind: 'pending'; message: AppWebhookMessageRow }
  | { kind: 'not-found' };

/**
 * Starts a delivered or failed message again: pending, attempts 0 (the retry schedule starts
 * over), due now, enqueued_at now (the caller hands the job off; if that is lost the relay does).
 * The last status code and error stay until the next attempt replaces them. The message keeps
 * its webhook-id, and its place in its user's order: later pending messages of the user wait for
 * it. A conditional update, so a pending message is left alone. Touches only this table.
 */
export async function redeliverAppWebhookMessage(
  db: Kysely<DB>,
  messageUuid: string,
): Promise<RedeliverAppWebhookResult> {
  const reset = await db
    .updateTable('app_webhook_messages')
    .set({
      status: 'pending',
      attempts: 0,
      next_attempt_at: null,
      delivered_at: null,
      enqueued_at: sql<Date>`now()`,
      updated_at: sql<Date>`now()`,
    })
    .where('message_id', '=', messageUuid)
    .where('status', 'in', ['delivered', 'failed'])
    .returningAll()
    .executeTakeFirst();
  if (reset) return { kind: 'redelivering', message: reset };
  const current = await db
    .selectFrom('app_webhook_messages')
    .selectAll()
    .where('message_id', '=', messageUuid)
    .executeTakeFirst();
  return current ? { kind: 'pending', message: current } : { kind: 'not-found' };
}
