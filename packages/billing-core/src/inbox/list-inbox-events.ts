import type { Kysely } from 'kysely';
import type { DB, InboxEventRow, InboxStatus, Provider } from '../db/schema';

export interface InboxEventFilter {
  provider?: Provider | undefined;
  type?: string | undefined;
  status?: InboxStatus | undefined;
  outcomeCode?: string | undefined;
  userId?: string | undefined;
  limit: number;
  /** Return rows with an id below this (newest first paging). */
  beforeId?: number | undefined;
}

export type InboxEventSummary = Omit<InboxEventRow, 'raw_body'>;

/** Every inbox column but the raw body. */
export const inboxSummaryColumns = [
  'id',
  'provider',
  'provider_event_id',
  'type',
  'livemode',
  'environment',
  'user_id',
  'provider_customer_id',
  'provider_subscription_id',
  'provider_payment_intent_id',
  'provider_invoice_id',
  'status',
  'attempts',
  'last_error',
  'outcome_code',
  'outcome_detail',
  'received_at',
  'enqueued_at',
  'next_attempt_at',
  'waiting_since',
  'deferrals',
  'replays',
  'replayed_at',
  'processed_at',
  'updated_at',
  'source',
  'raw_body_pruned_at',
] as const;

/** Lists inbox rows newest first, without their raw bodies. */
export async function listInboxEvents(
  db: Kysely<DB>,
  filter: InboxEventFilter,
): Promise<{ events: InboxEventSummary[]; nextCursor: number | null }> {
  let query = db
    .selectFrom('inbox_events')
    .select(inboxSummaryColumns)
    .orderBy('id', 'desc')
    .limit(filter.limit + 1);
  if (filter.provider) query = query.where('provider', '=', filter.provider);
  if (filter.type) query = query.where('type', '=', filter.type);
  if (filter.status) query = query.where('status', '=', filter.status);
  if (filter.outcomeCode) query = query.where('outcome_code', '=', filter.outcomeCode);
  if (filter.userId) query = query.where('user_id', '=', filter.userId);
  if (filter.beforeId !== undefined) query = query.where('id', '<', filter.beforeId);
  const rows = await query.execute();
  const events = rows.slice(0, filter.limit);
  const last = events[events.length - 1];
  return { events, nextCursor: rows.length > filter.limit && last ? last.id : null };
}

/** One inbox row with its raw body (admin only: the body may hold personal data). */
export function findInboxEvent(db: Kysely<DB>, inboxEventId: number): Promise<InboxEventRow | undefined> {
  return db.selectFrom('inbox_events').selectAll().where('id', '=', inboxEventId).executeTakeFirst();
}
