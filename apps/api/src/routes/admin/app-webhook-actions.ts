import { type AppWebhookMessageRow, type DB, redeliverAppWebhookMessage } from '@tally/billing-core';
import type { Kysely } from 'kysely';
import type { AppWebhookDelivery } from '../../app-webhook-delivery';

export interface AppWebhookActionDeps {
  db: Kysely<DB>;
  /** `not_configured` without APP_WEBHOOK_URL: messages are written, not delivered (default `on`). */
  appWebhookDelivery?: AppWebhookDelivery;
  /** Hands redelivered messages to the app-webhooks queue; a failure leaves them for the relay. */
  enqueueAppWebhooks: (ids: number[]) => Promise<{ enqueued: number; alreadyQueued: number; deferred: number }>;
}

/** What a redeliver did in the database (the queue hand-off comes after the commit). */
export type RedeliverResult =
  | { kind: 'done'; message: AppWebhookMessageRow }
  | { kind: 'refused'; status: 404 | 409; code: 'not_found' | 'not_finished'; message: string };

/**
 * Redeliver of one message, as the admin API and the console run it, inside the caller's
 * transaction (with its audit row): a delivered or failed message starts again, or why not (404
 * unknown, 409 still pending). `webhookId` is the `msg_…` id the caller was given, for the message.
 */
export async function redeliverOneMessage(
  db: Kysely<DB>,
  messageUuid: string,
  webhookId: string,
): Promise<RedeliverResult> {
  const result = await redeliverAppWebhookMessage(db, messageUuid);
  switch (result.kind) {
    case 'redelivering':
      return { kind: 'done', message: result.message };
    case 'not-found':
      return {
        kind: 'refused',
        status: 404,
        code: 'not_found',
        message: `app webhook message ${webhookId} does not exist`,
      };
    case 'pending':
      return {
        kind: 'refused',
        status: 409,
        code: 'not_finished',
        message: `app webhook message ${webhookId} is pending; only delivered or failed messages are redelivered`,
      };
    default: {
      const exhaustive: never = result;
      throw new Error(`unhandled result ${JSON.stringify(exhaustive)}`);
    }
  }
}

/** Hands a redelivered message to its queue; when that fails the relay does it. */
export async function deliverMessage(deps: AppWebhookActionDeps, message: AppWebhookMessageRow) {
  const { enqueued, alreadyQueued, deferred } = await deps.enqueueAppWebhooks([message.id]);
  return { enqueued, alreadyQueued, deferred };
}
