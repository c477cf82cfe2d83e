import { type Kysely, sql } from 'kysely';
import type { DB } from '../db/schema';
import type { InboxEventDraft } from './inbox-event-draft';
import { inboxRelaySource } from './inbox-relay-source';

export type RecordInboxEventResult =
  | { kind: 'recorded'; inboxEventId: number }
  | { kind: 'duplicate'; inboxEventId: number | null };

/** The inbox row a draft is stored as (one draft or a batch of them, record-inbox-events.ts). */
export function toInboxEventRow(draft: InboxEventDraft) {
  return {
    provider: draft.provider,
    provider_event_id: draft.providerEventId,
    type: draft.type,
    livemode: draft.livemode,
    environment: draft.environment,
    user_id: draft.userId,
    provider_customer_id: draft.providerCustomerId,
    provider_subscription_id: draft.providerSubscriptionId,
    provider_payment_intent_id: draft.providerPaymentIntentId,
    provider_invoice_id: draft.providerInvoiceId,
    raw_body: draft.rawBody,
    source: draft.source ?? 'webhook',
    // The database clock: the relay compares this with now() on the same clock.
    enqueued_at: sql<Date>`now()`,
  };
}

/** The columns a batch insert writes from each draft (enqueued_at is the database's now()). */
export const inboxInsertColumns = [
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
  'raw_body',
  'source',
] as const;

/** A draft's values in inboxInsertColumns order: the same mapping as toInboxEventRow. */
export function toInboxEventValues(draft: InboxEventDraft): unknown[] {
  const row = toInboxEventRow(draft);
  return inboxInsertColumns.map((column) => row[column]);
}

/**
 * Stores a verified webhook once. The unique (provider, provider_event_id) index is the fence:
 * a redelivery, even one racing the first delivery from another ingest replica, inserts nothing
 * and comes back as `duplicate`. The row is written with enqueued_at set, on the assumption that
 * the caller enqueues it next; if that hand-off fails the caller calls markInboxEnqueueFailed,
 * and if the process dies first the relay finds the row once enqueued_at is stale.
 */
export async function recordInboxEvent(db: Kysely<DB>, draft: InboxEventDraft): Promise<RecordInboxEventResult> {
  const inserted = await db
    .insertInto('inbox_events')
    .values(toInboxEventRow(draft))
    .onConflict((oc) => oc.columns(['provider', 'provider_event_id']).doNothing())
    .returning('id')
    .executeTakeFirst();
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
