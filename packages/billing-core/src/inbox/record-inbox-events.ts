import { isDatabaseUnavailableError } from '@tally/platform/db';
import type { Kysely } from 'kysely';
import type { DB } from '../db/schema';
import type { InboxEventDraft } from './inbox-event-draft';
import { insertInboxRows, type RecordInboxEventResult, recordInboxEvent } from './record-inbox-event';

/**
 * One draft's outcome in a batch. `unavailable`: the database could not be reached, nothing of
 * this draft is stored (the provider must retry). `failed`: this draft alone could not be
 * stored for another reason (the batch's other drafts are unaffected).
 */
export type RecordInboxEventsResult =
  | RecordInboxEventResult
  | { kind: 'unavailable'; error: unknown }
  | { kind: 'failed'; error: unknown };

const keyOf = (draft: InboxEventDraft) => `${draft.provider}\u0000${draft.providerEventId}`;

/** The batch's lock order: by provider, then event id (code-unit order, the same in every process). */
function compareKeys(a: InboxEventDraft, b: InboxEventDraft): number {
  if (a.provider !== b.provider) return a.provider < b.provider ? -1 : 1;
  if (a.providerEventId === b.providerEventId) return 0;
  return a.providerEventId < b.providerEventId ? -1 : 1;
}

/**
 * Stores many verified webhooks with ONE multi-row `INSERT … ON CONFLICT DO NOTHING RETURNING`
 * (one statement, so one commit: each row is durable when this returns), and answers one result
 * per draft, in order. Same fence as recordInboxEvent: the unique (provider, provider_event_id)
 * index. A draft whose key appears earlier in the same batch is a `duplicate` of that first
 * occurrence (exactly one of them is `recorded`); a draft whose row already existed, or was
 * committed by a concurrent insert, is a `duplicate` too.
 *
 * Failure: a database that cannot be reached makes every draft `unavailable` (the statement is
 * atomic: none was stored). Any other error of the batch statement (a row-level problem, which
 * sanitised drafts should never cause) falls back to one insert per draft, so only the draft at
 * fault ends `failed`. Never throws.
 */
export async function recordInboxEvents(
  db: Kysely<DB>,
  drafts: readonly InboxEventDraft[],
): Promise<RecordInboxEventsResult[]> {
  if (drafts.length === 0) return [];
  const firstIndex = new Map<string, number>();
  const unique: InboxEventDraft[] = [];
  for (const [index, draft] of drafts.entries()) {
    const key = keyOf(draft);
    if (!firstIndex.has(key)) {
      firstIndex.set(key, index);
      unique.push(draft);
    }
  }

  // One order for every batch: concurrent batches (this process's and other ingest replicas')
  // that share keys then take their index-entry locks in the same order and wait for each other
  // instead of deadlocking (in arrival order, a redelivery storm deadlocks them).
  // guard: ingest-batch-key-order
  unique.sort(compareKeys);
  let inserted: { id: number; provider: string; provider_event_id: string }[];
  try {
    inserted = await insertInboxRows(db, unique);
  } catch (error) {
    if (isDatabaseUnavailableError(error)) return drafts.map(() => ({ kind: 'unavailable', error }));
    return recordOneByOne(db, drafts);
  }

  const recordedIds = new Map<string, number>();
  for (const row of inserted) recordedIds.set(`${row.provider}\u0000${row.provider_event_id}`, row.id);
  const existingIds = new Map<string, number>();
  const conflicted = unique.filter((draft) => !recordedIds.has(keyOf(draft)));
  if (conflicted.length > 0) {
    // Only for the log line and the caller's answer: a failure here must not turn stored or
    // already-stored events into errors, so the ids are then simply unknown.
    try {
      const rows = await db
        .selectFrom('inbox_events')
        .select(['id', 'provider', 'provider_event_id'])
        .where((eb) =>
          eb.or(
            conflicted.map((draft) =>
              eb.and([eb('provider', '=', draft.provider), eb('provider_event_id', '=', draft.providerEventId)]),
            ),
          ),
        )
        .execute();
      for (const row of rows) existingIds.set(`${row.provider}\u0000${row.provider_event_id}`, row.id);
    } catch {
      // ids stay unknown (null)
    }
  }

  return drafts.map((draft, index): RecordInboxEventsResult => {
    const key = keyOf(draft);
    const recordedId = recordedIds.get(key);
    if (recordedId !== undefined && firstIndex.get(key) === index)
      return { kind: 'recorded', inboxEventId: recordedId };
    return { kind: 'duplicate', inboxEventId: recordedId ?? existingIds.get(key) ?? null };
  });
}

/** The fallback: each draft on its own, so one bad row fails alone. */
async function recordOneByOne(db: Kysely<DB>, drafts: readonly InboxEventDraft[]): Promise<RecordInboxEventsResult[]> {
  const results: RecordInboxEventsResult[] = [];
  for (const draft of drafts) {
    try {
      results.push(await recordInboxEvent(db, draft));
    } catch (error) {
      results.push(isDatabaseUnavailableError(error) ? { kind: 'unavailable', error } : { kind: 'failed', error });
    }
  }
  return results;
}
