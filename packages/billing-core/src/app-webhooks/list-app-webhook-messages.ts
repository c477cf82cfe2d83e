import type { Kysely } from 'kysely';
import { readKeysetPage } from '../db/keyset-page';
import type { AppWebhookMessageRow, AppWebhookMessageStatus, AppWebhookMessageType, DB } from '../db/schema';
import { toWebhookId } from './webhook-id';

export interface AppWebhookMessageFilter {
  userId?: string | undefined;
  type?: AppWebhookMessageType | undefined;
  /** `pending` includes messages being sent right now (`processing`), as the admin API shows them. */
  status?: 'pending' | 'delivered' | 'failed' | undefined;
  limit: number;
  /** Return messages with an internal id below this (newest first paging). */
  beforeId?: number | undefined;
}

/** What the admin API and CLI show of a message; `body` only on the single-message view. */
export interface AppWebhookMessageView {
  id: string;
  type: AppWebhookMessageType;
  userId: string;
  status: 'pending' | 'delivered' | 'failed';
  attempts: number;
  lastStatusCode: number | null;
  lastError: string | null;
  nextAttemptAt: string | null;
  createdAt: string;
  deliveredAt: string | null;
}

/** `processing` is an internal step of `pending`: the contract's statuses are pending, delivered, failed. */
export function toPublicStatus(status: AppWebhookMessageStatus): AppWebhookMessageView['status'] {
  return status === 'processing' ? 'pending' : status;
}

export function toAppWebhookMessageView(row: AppWebhookMessageRow): AppWebhookMessageView {
  return {
    id: toWebhookId(row.message_id),
    type: row.type,
    userId: row.user_id,
    status: toPublicStatus(row.status),
    attempts: row.attempts,
    lastStatusCode: row.last_status_code,
    lastError: row.last_error,
    nextAttemptAt: row.next_attempt_at?.toISOString() ?? null,
    createdAt: row.created_at.toISOString(),
    deliveredAt: row.delivered_at?.toISOString() ?? null,
  };
}

/** Lists messages newest first; nextCursor is the internal id to pass as beforeId. */
export async function listAppWebhookMessages(
  db: Kysely<DB>,
  filter: AppWebhookMessageFilter,
): Promise<{ messages: AppWebhookMessageRow[]; nextCursor: number | null }> {
  let query = db.selectFrom('app_webhook_messages').selectAll();
  if (filter.userId) query = query.where('user_id', '=', filter.userId);
  if (filter.type) query = query.where('type', '=', filter.type);
  if (filter.status === 'pending') query = query.where('status', 'in', ['pending', 'processing']);
  else if (filter.status) query = query.where('status', '=', filter.status);
  const { page, next } = await readKeysetPage(query, filter);
  return { messages: page, nextCursor: next?.id ?? null };
}

/** One message by its uuid (parseWebhookId of the `msg_…` id). */
export function findAppWebhookMessage(db: Kysely<DB>, messageUuid: string): Promise<AppWebhookMessageRow | undefined> {
  return db.selectFrom('app_webhook_messages').selectAll().where('message_id', '=', messageUuid).executeTakeFirst();
}
