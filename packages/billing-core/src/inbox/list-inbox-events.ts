import type { Expression, ExpressionBuilder, Kysely, SqlBool } from 'kysely';
import { readKeysetPage } from '../db/keyset-page';
import type { DB, InboxEventRow, InboxStatus, Provider } from '../db/schema';
import { inboxIndexColumns } from './inbox-event-draft';

/** What an operator's filter on inbox rows names: each field given narrows the rows. */
export interface InboxEventMatch {
  provider?: Provider | undefined;
  type?: string | undefined;
  userId?: string | undefined;
  outcomeCode?: string | undefined;
}

/** The condition of an InboxEventMatch: every field given must equal (no field: every row). */
export function matchingInboxEvents(match: InboxEventMatch) {
  return (eb: ExpressionBuilder<DB, 'inbox_events'>): Expression<SqlBool> => {
    const conditions: Expression<SqlBool>[] = [];
    if (match.provider) conditions.push(eb('provider', '=', match.provider));
    if (match.type) conditions.push(eb('type', '=', match.type));
    if (match.userId) conditions.push(eb('user_id', '=', match.userId));
    if (match.outcomeCode) conditions.push(eb('outcome_code', '=', match.outcomeCode));
    return eb.and(conditions);
  };
}

export interface InboxEventFilter extends InboxEventMatch {
  status?: InboxStatus | undefined;
  limit: number;
  /** Return rows with an id below this (newest first paging). */
  beforeId?: number | undefined;
}

export type InboxEventSummary = Omit<InboxEventRow, 'raw_body'>;

/** Every inbox column but the raw body. */
export const inboxSummaryColumns = [
  'id',
  ...inboxIndexColumns,
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
  let query = db.selectFrom('inbox_events').select(inboxSummaryColumns).where(matchingInboxEvents(filter));
  if (filter.status) query = query.where('status', '=', filter.status);
  const { page, next } = await readKeysetPage(query, filter);
  return { events: page, nextCursor: next?.id ?? null };
}

/** One inbox row with its raw body (admin only: the body may hold personal data). */
export function findInboxEvent(db: Kysely<DB>, inboxEventId: number): Promise<InboxEventRow | undefined> {
  return db.selectFrom('inbox_events').selectAll().where('id', '=', inboxEventId).executeTakeFirst();
}
