import type { Kysely } from 'kysely';
import type { DB, Provider } from '../db/schema';
import type { InboxEventDraft } from '../inbox/inbox-event-draft';
import { markInboxEnqueueFailed } from '../inbox/record-inbox-event';
import { recordInboxEvents } from '../inbox/record-inbox-events';

/**
 * What reconciliation did with an event the provider has and the inbox lacked: `ingested`, stored
 * now (source 'backfill') and handed to the queue; `duplicate`, a delivery won the race;
 * `would_ingest`, a dry run; `failed`, it could not be stored.
 */
export type BackfillResult = 'ingested' | 'duplicate' | 'would_ingest' | 'failed';

export interface BackfilledDraft {
  draft: InboxEventDraft;
  result: BackfillResult;
  inboxEventId: number | null;
}

export interface BackfillDeps {
  db: Kysely<DB>;
  /** Hands newly stored inbox rows to the queue (ingest's path); a failure leaves them to the relay. */
  enqueue: (inboxEventIds: number[]) => Promise<unknown>;
}

/** Which of `providerEventIds` the inbox already holds for `provider` (1000 ids per query). Read only. */
export async function findStoredEventIds(
  db: Kysely<DB>,
  provider: Provider,
  providerEventIds: readonly string[],
): Promise<Set<string>> {
  const stored = new Set<string>();
  for (let index = 0; index < providerEventIds.length; index += 1000) {
    const rows = await db
      .selectFrom('inbox_events')
      .select('provider_event_id')
      .where('provider', '=', provider)
      .where('provider_event_id', 'in', providerEventIds.slice(index, index + 1000))
      .execute();
    for (const row of rows) stored.add(row.provider_event_id);
  }
  return stored;
}

/**
 * Stores the drafts of events the inbox lacked through ingest's own path, in the order given (the
 * provider's delivery order, oldest first): recordInboxEvents, whose unique (provider, event id)
 * index is the fence (a delivery racing the backfill stores one row), each row marked
 * `source = 'backfill'`; then the new rows are handed to the queue, or marked for the relay when
 * that fails. One result per draft, in order. `dryRun` stores nothing (`would_ingest`). Never
 * opens a transaction: the caller's provider calls all happened before this.
 */
export async function backfillInboxDrafts(
  deps: BackfillDeps,
  drafts: readonly InboxEventDraft[],
  options: { dryRun: boolean },
): Promise<BackfilledDraft[]> {
  if (options.dryRun) return drafts.map((draft) => ({ draft, result: 'would_ingest', inboxEventId: null }));
  if (drafts.length === 0) return [];
  const results = await recordInboxEvents(
    deps.db,
    drafts.map((draft) => ({ ...draft, source: 'backfill' })),
  );
  const recordedIds: number[] = [];
  const backfilled = results.map((result, index): BackfilledDraft => {
    const draft = drafts[index] as InboxEventDraft;
    if (result.kind === 'recorded') {
      recordedIds.push(result.inboxEventId);
      return { draft, result: 'ingested', inboxEventId: result.inboxEventId };
    }
    if (result.kind === 'duplicate') return { draft, result: 'duplicate', inboxEventId: result.inboxEventId };
    return { draft, result: 'failed', inboxEventId: null };
  });
  if (recordedIds.length > 0) {
    try {
      await deps.enqueue(recordedIds);
    } catch {
      await markInboxEnqueueFailed(deps.db, recordedIds).catch(() => undefined);
    }
  }
  return backfilled;
}
