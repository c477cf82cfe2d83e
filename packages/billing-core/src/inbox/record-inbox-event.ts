import { CompiledQuery, type Kysely } from 'kysely';
import type { DB } from '../db/schema';
import { type InboxEventDraft, inboxIndexColumns } from './inbox-event-draft';
import { inboxRelaySource } from './inbox-relay-source';

export type RecordInboxEventResult =
  | { kind: 'recorded'; inboxEventId: number }
  | { kind: 'duplicate'; inboxEventId: number | null };

/** The columns an insert writes from each draft (enqueued_at is the database's now()). */
const inboxInsertColumns = [...inboxIndexColumns, 'raw_body', 'source'] as const;

/** A draft's values in inboxInsertColumns order. */
function toInboxEventValues(draft: InboxEventDraft): unknown[] {
  return [
    draft.provider,
    draft.providerEventId,
    draft.type,
    draft.livemode,
    draft.environment,
    draft.userId,
    draft.providerCustomerId,
    draft.providerSubscriptionId,
    draft.providerPaymentIntentId,
    draft.providerInvoiceId,
    draft.rawBody,
    draft.source ?? 'webhook',
  ];
}

const insertTexts = new Map<number, string>();

/**
 * The insert's SQL for `rows` drafts, built once per size and reused: ingest stores every webhook
 * through here, and building the statement per batch (a query builder walking hundreds of value
 * nodes) was a visible share of ingest's CPU per request.
 */
function insertText(rows: number): string {
  let text = insertTexts.get(rows);
  if (text === undefined) {
    const width = inboxInsertColumns.length;
    const tuples = Array.from({ length: rows }, (_, row) => {
      const placeholders = inboxInsertColumns.map((_column, column) => `$${row * width + column + 1}`);
      // The database clock: the relay compares enqueued_at with now() on the same clock.
      return `(${placeholders.join(', ')}, now())`;
    });
    text = `INSERT INTO inbox_events (${inboxInsertColumns.join(', ')}, enqueued_at) VALUES ${tuples.join(', ')}
      ON CONFLICT (provider, provider_event_id) DO NOTHING RETURNING id, provider, provider_event_id`;
    insertTexts.set(rows, text);
  }
  return text;
}

/**
 * The one inbox insert: drafts with distinct keys, in one `INSERT … ON CONFLICT DO NOTHING
 * RETURNING` (one statement, one commit); answers the rows it inserted. Throws what the database
 * throws. One draft (recordInboxEvent) is a batch of one (recordInboxEvents).
 */
export async function insertInboxRows(
  db: Kysely<DB>,
  drafts: readonly InboxEventDraft[],
): Promise<{ id: number; provider: string; provider_event_id: string }[]> {
  const result = await db.executeQuery<{ id: number; provider: string; provider_event_id: string }>(
    CompiledQuery.raw(insertText(drafts.length), drafts.flatMap(toInboxEventValues)),
  );
  return result.rows;
}

/**
 * Stores a verified webhook once. The unique (provider, provider_event_id) index is the fence:
 * a redelivery, even one racing the first delivery from another ingest replica, inserts nothing
 * and comes back as `duplicate`. The row is written with enqueued_at set, on the assumption that
 * the caller enqueues it next; if that hand-off fails the caller calls markInboxEnqueueFailed,
 * and if the process dies first the relay finds the row once enqueued_at is stale.
 */
export async function recordInboxEvent(db: Kysely<DB>, draft: InboxEventDraft): Promise<RecordInboxEventResult> {
  const [inserted] = await insertInboxRows(db, [draft]);
  if (inserted) return { kind: 'recorded', inboxEventId: inserted.id };
  const existing = await db
    .selectFrom('inbox_events')
    .select('id')
    .where('provider', '=', draft.provider)
    .where('provider_event_id', '=', draft.providerEventId)
    .executeTakeFirst();
  return { kind: 'duplicate', inboxEventId: existing?.id ?? null };
}

/** Clears enqueued_at so the relay hands the rows to the queue on its next pass. */
export async function markInboxEnqueueFailed(db: Kysely<DB>, inboxEventIds: number | readonly number[]): Promise<void> {
  const ids = typeof inboxEventIds === 'number' ? [inboxEventIds] : [...inboxEventIds];
  if (ids.length === 0) return;
  await inboxRelaySource.releaseHandOff(db, ids);
}
