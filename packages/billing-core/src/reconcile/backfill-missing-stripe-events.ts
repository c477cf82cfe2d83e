import type { InboxEventDraft } from '../inbox/inbox-event-draft';
import type { StripeApi } from '../ports/stripe-api';
import { stripeHandledEventTypes } from '../providers/stripe/create-stripe-handler';
import { toStripeInboxDraftFromBody } from '../providers/stripe/stripe-event';
import {
  type BackfillDeps,
  type BackfillResult,
  backfillInboxDrafts,
  findStoredEventIds,
} from './backfill-inbox-drafts';

export interface MissingStripeEvent {
  eventId: string;
  type: string;
  createdAt: string | null;
  result: BackfillResult;
  inboxEventId: number | null;
}

export interface StripeEventsBackfill {
  /** Events of the handled types Stripe listed in the window. */
  stripeEvents: number;
  truncated: boolean;
  missingEvents: MissingStripeEvent[];
}

export interface BackfillMissingStripeEventsDeps extends BackfillDeps {
  stripe: StripeApi;
}

/**
 * Reconciliation's first job: the events Stripe has that the inbox lacks. Lists Stripe's Events
 * API from `windowStart` (handled types only, newest first, page by page, at most `maxEvents`),
 * finds the events the inbox does not hold, and (unless `dryRun`) ingests them through ingest's
 * own path: the Stripe draft function, then backfillInboxDrafts (recordInboxEvents, whose unique
 * (provider, event id) index is the fence, so a webhook racing the backfill stores one row; then
 * the queue hand-off). Rows are marked `source = 'backfill'`; their raw body is the event as the
 * Events API returned it.
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
      drafts.push(draft);
      createdOf.set(
        draft.providerEventId,
        typeof event.created === 'number' ? new Date(event.created * 1000).toISOString() : null,
      );
    } catch {
      // An event without a usable id or type cannot be keyed; ingest would refuse it too.
    }
  }
  const known = await findStoredEventIds(
    deps.db,
    'stripe',
    drafts.map((draft) => draft.providerEventId),
  );
  // Oldest first, as Stripe would have delivered them (the Events API lists newest first).
  const missingDrafts = drafts.filter((draft) => !known.has(draft.providerEventId)).reverse();
  const backfilled = await backfillInboxDrafts(deps, missingDrafts, { dryRun: options.dryRun });
  const missingEvents = backfilled.map(
    ({ draft, result, inboxEventId }): MissingStripeEvent => ({
      eventId: draft.providerEventId,
      type: draft.type,
      createdAt: createdOf.get(draft.providerEventId) ?? null,
      result,
      inboxEventId,
    }),
  );
  return { stripeEvents: drafts.length, truncated, missingEvents };
}
