import type { Kysely } from 'kysely';
import type { DB } from '../db/schema';
import type { InboxEventDraft } from '../inbox/inbox-event-draft';
import { markInboxEnqueueFailed } from '../inbox/record-inbox-event';
import { recordInboxEvents } from '../inbox/record-inbox-events';
import type { StripeApi } from '../ports/stripe-api';
import { stripeHandledEventTypes } from '../providers/stripe/create-stripe-handler';
import { toStripeInboxDraftFromBody } from '../providers/stripe/stripe-event';

export interface MissingStripeEvent {
  eventId: string;
  type: string;
  createdAt: string | null;
  /** ingested: stored now (source 'backfill') and handed to the queue; duplicate: a webhook won the race; would_ingest: dry run; failed: could not be stored. */
  result: 'ingested' | 'duplicate' | 'would_ingest' | 'failed';
  inboxEventId: number | null;
}

export interface StripeEventsBackfill {
  /** Events of the handled types Stripe listed in the window. */
  stripeEvents: number;
  truncated: boolean;
  missingEvents: MissingStripeEvent[];
}

export interface BackfillMissingStripeEventsDeps {
  db: Kysely<DB>;
  stripe: StripeApi;
  /** Hands newly stored inbox rows to the queue (ingest's path); a failure leaves them to the relay. */
  enqueue: (inboxEventIds: number[]) => Promise<unknown>;
}

/**
 * Reconciliation's first job: the events Stripe has that the inbox lacks. Lists Stripe's Events
 * API from `windowStart` (handled types only, newest first, page by page, at most `maxEvents`),
 * finds the events the inbox does not hold, and (unless `dryRun`) ingests them through ingest's
 * own path: the Stripe draft function, recordInboxEvents (the unique (provider, event id) index is
 * the fence, so a webhook racing the backfill stores one row), then the queue hand-off. Rows are
 * marked `source = 'backfill'`; their raw body is the event as the Events API returned it.
 * Throws what the Stripe API port throws.
 */
export async function backfillMissingStripeEvents(
  deps: BackfillMissingStripeEventsDeps,
  options: { windowStart: Date; dryRun: boolean; maxEvents: number },
): Promise<StripeEventsBackfill> {
  const listed: Record<string, unknown>[] = [];
  let startingAfter: string | undefined;
  let truncated = false;
  for (;;) {
    const page = await deps.stripe.listEvents({
      types: [...stripeHandledEventTypes],
      createdGte: Math.floor(options.windowStart.getTime() / 1000),
      limit: 100,
      ...(startingAfter === undefined ? {} : { startingAfter }),
    });
    listed.push(...page.data);
    const last = page.data.at(-1);
    if (!page.hasMore || last === undefined || typeof last.id !== 'string') break;
    if (listed.length >= options.maxEvents) {
      truncated = true;
      break;
    }
    startingAfter = last.id;
  }

  const drafts: InboxEventDraft[] = [];
  const createdOf = new Map<string, string | null>();
  for (const event of listed) {
    try {
      const draft = toStripeInboxDraftFromBody(JSON.stringify(event));
      drafts.push({ ...draft, source: 'backfill' });
      createdOf.set(
        draft.providerEventId,
        typeof event.created === 'number' ? new Date(event.created * 1000).toISOString() : null,
      );
    } catch {
      // An event without a usable id or type cannot be keyed; ingest would refuse it too.
    }
  }
  const known = new Set<string>();
  for (let index = 0; index < drafts.length; index += 1000) {
    const ids = drafts.slice(index, index + 1000).map((draft) => draft.providerEventId);
    const rows = await deps.db
      .selectFrom('inbox_events')
      .select('provider_event_id')
      .where('provider', '=', 'stripe')
      .where('provider_event_id', 'in', ids)
      .execute();
    for (const row of rows) known.add(row.provider_event_id);
  }
  const missingDrafts = drafts.filter((draft) => !known.has(draft.providerEventId));
  const describe = (
    draft: InboxEventDraft,
    result: MissingStripeEvent['result'],
    inboxEventId: number | null,
  ): MissingStripeEvent => ({
    eventId: draft.providerEventId,
    type: draft.type,
    createdAt: createdOf.get(draft.providerEventId) ?? null,
    result,
    inboxEventId,
  });
  const missingEvents: MissingStripeEvent[] = [];
  if (options.dryRun) {
    for (const draft of missingDrafts) missingEvents.push(describe(draft, 'would_ingest', null));
  } else if (missingDrafts.length > 0) {
    // Oldest first, as Stripe would have delivered them.
    missingDrafts.reverse();
    const results = await recordInboxEvents(deps.db, missingDrafts);
    const recordedIds: number[] = [];
    for (const [index, result] of results.entries()) {
      const draft = missingDrafts[index] as InboxEventDraft;
      if (result.kind === 'recorded') {
        recordedIds.push(result.inboxEventId);
        missingEvents.push(describe(draft, 'ingested', result.inboxEventId));
      } else if (result.kind === 'duplicate') {
        missingEvents.push(describe(draft, 'duplicate', result.inboxEventId));
      } else {
        missingEvents.push(describe(draft, 'failed', null));
      }
    }
    if (recordedIds.length > 0) {
      try {
        await deps.enqueue(recordedIds);
      } catch {
        await markInboxEnqueueFailed(deps.db, recordedIds).catch(() => undefined);
      }
    }
  }
  return { stripeEvents: drafts.length, truncated, missingEvents };
}
