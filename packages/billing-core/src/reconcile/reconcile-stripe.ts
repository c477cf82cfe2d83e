import { type Kysely, sql } from 'kysely';
import type { DB } from '../db/schema';
import { BillingError } from '../errors';
import type { InboxEventDraft } from '../inbox/inbox-event-draft';
import { markInboxEnqueueFailed } from '../inbox/record-inbox-event';
import { recordInboxEvents } from '../inbox/record-inbox-events';
import type { StripeApi } from '../ports/stripe-api';
import { stripeHandledEventTypes } from '../providers/stripe/create-stripe-handler';
import { toStripeInboxDraftFromBody } from '../providers/stripe/stripe-event';

/** Stripe's Events API keeps events for 30 days. */
export const STRIPE_EVENTS_MAX_WINDOW_DAYS = 30;
export const DEFAULT_RECONCILE_WINDOW_DAYS = 3;
const DAY_MS = 24 * 3600_000;

/** The window asked for is outside 1..30 days. */
export class ReconcileWindowError extends BillingError {
  constructor(windowDays: number) {
    super(
      'invalid_window',
      `the window must be between 1 and ${STRIPE_EVENTS_MAX_WINDOW_DAYS} days (Stripe keeps events 30 days), got ${windowDays}`,
      { retryable: false },
    );
  }
}

export interface ReconcileStripeOptions {
  /** Days back from now (default 3, at most 30). Fractions are allowed (tests, short windows). */
  windowDays?: number;
  /** Report only: missing events are listed, not ingested. */
  dryRun?: boolean;
  /** Ledger rows younger than this are not reported as "without an event" (their webhook may be in flight). */
  ledgerGraceMs?: number;
  /** Stops listing after this many events (the report says `truncated`). */
  maxEvents?: number;
  /** Rows of each discrepancy list reported at most. */
  maxReported?: number;
}

export interface MissingStripeEvent {
  eventId: string;
  type: string;
  createdAt: string | null;
  /** ingested: stored now (source 'backfill') and handed to the queue; duplicate: a webhook won the race; would_ingest: dry run; failed: could not be stored. */
  result: 'ingested' | 'duplicate' | 'would_ingest' | 'failed';
  inboxEventId: number | null;
}

export interface EventWithoutRows {
  inboxEventId: number;
  eventId: string;
  type: string;
  outcomeCode: string | null;
  /** What the event's outcome says should exist and does not. */
  missing: string[];
}

export interface LedgerRowWithoutEvent {
  ledgerEntryId: number;
  reference: string;
  userId: string;
  amount: number;
  createdAt: string;
}

export interface StripeReconciliationReport {
  ok: boolean;
  dryRun: boolean;
  windowDays: number;
  windowStart: string;
  /** Events of the handled types Stripe listed in the window. */
  stripeEvents: number;
  truncated: boolean;
  missingEvents: MissingStripeEvent[];
  eventsWithoutRows: EventWithoutRows[];
  ledgerRowsWithoutEvent: LedgerRowWithoutEvent[];
}

export interface ReconcileStripeDeps {
  db: Kysely<DB>;
  stripe: StripeApi;
  /** Hands newly stored inbox rows to the queue (ingest's path); a failure leaves them to the relay. */
  enqueue: (inboxEventIds: number[]) => Promise<unknown>;
  now?: () => Date;
}

/** Outcome codes with which a Stripe event says it granted (or found already granted) a payment's tokens. */
const creditCodes = ['credited', 'already_credited'];
const paymentTypes = [
  'payment_intent.succeeded',
  'checkout.session.completed',
  'checkout.session.async_payment_succeeded',
];
const subscriptionTypes = [
  'customer.subscription.created',
  'customer.subscription.updated',
  'customer.subscription.deleted',
];

/**
 * Stripe reconciliation over a window (default 3 days, at most Stripe's 30):
 *
 * 1. **Backfill.** Lists Stripe's Events API (handled types only), finds the events the inbox
 *    does not hold, and ingests them through ingest's own path: the Stripe draft function,
 *    recordInboxEvents (the unique (provider, event id) index is the fence, so a webhook racing
 *    the backfill stores one row), then the queue hand-off. Rows are marked `source = 'backfill'`;
 *    their raw body is the event as the Events API returned it.
 * 2. **Events processed without their rows** (inbox rows received in the window):
 *    a payment event (`payment_intent.succeeded`, `checkout.session.*`) or `invoice.paid` whose
 *    outcome is credited/already_credited must have its ledger entry (`stripe:payment:{pi}` /
 *    `stripe:invoice:{id}`) and its `payments` row; a processed `charge.refunded` (outcome
 *    refunded) a payments row marked refunded; a processed `customer.subscription.*` its
 *    `stripe_subscriptions` row.
 * 3. **Ledger rows without an event** (created in the window, older than the grace period):
 *    `stripe:payment:{pi}` with no inbox event naming that payment intent, `stripe:invoice:{id}`
 *    with no inbox event naming that invoice, `stripe:refund:*` not linked to an event.
 *    (`stripe:installment:*` rows come from the installments schedule, not from an event.)
 *
 * A second run finds nothing new: what the first ingested is in the inbox.
 */
export async function reconcileStripe(
  deps: ReconcileStripeDeps,
  options: ReconcileStripeOptions = {},
): Promise<StripeReconciliationReport> {
  const windowDays = options.windowDays ?? DEFAULT_RECONCILE_WINDOW_DAYS;
  if (!(windowDays > 0 && windowDays <= STRIPE_EVENTS_MAX_WINDOW_DAYS)) throw new ReconcileWindowError(windowDays);
  const dryRun = options.dryRun ?? false;
  const maxEvents = options.maxEvents ?? 50_000;
  const maxReported = options.maxReported ?? 1_000;
  const now = (deps.now ?? (() => new Date()))();
  const windowStart = new Date(now.getTime() - windowDays * DAY_MS);

  // 1. What Stripe has, newest first, page by page.
  const listed: Record<string, unknown>[] = [];
  let startingAfter: string | undefined;
  let truncated = false;
  for (;;) {
    const page = await deps.stripe.listEvents({
      types: [...stripeHandledEventTypes],
      createdGte: Math.floor(windowStart.getTime() / 1000),
      limit: 100,
      ...(startingAfter === undefined ? {} : { startingAfter }),
    });
    listed.push(...page.data);
    const last = page.data.at(-1);
    if (!page.hasMore || last === undefined || typeof last.id !== 'string') break;
    if (listed.length >= maxEvents) {
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
  const missingEvents: MissingStripeEvent[] = [];
  if (dryRun) {
    for (const draft of missingDrafts) {
      missingEvents.push(describe(draft, createdOf, 'would_ingest', null));
    }
  } else if (missingDrafts.length > 0) {
    // Oldest first, as Stripe would have delivered them.
    missingDrafts.reverse();
    const results = await recordInboxEvents(deps.db, missingDrafts);
    const recordedIds: number[] = [];
    for (const [index, result] of results.entries()) {
      const draft = missingDrafts[index] as InboxEventDraft;
      if (result.kind === 'recorded') {
        recordedIds.push(result.inboxEventId);
        missingEvents.push(describe(draft, createdOf, 'ingested', result.inboxEventId));
      } else if (result.kind === 'duplicate') {
        missingEvents.push(describe(draft, createdOf, 'duplicate', result.inboxEventId));
      } else {
        missingEvents.push(describe(draft, createdOf, 'failed', null));
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

  const eventsWithoutRows = await findEventsWithoutRows(deps.db, windowStart, maxReported);
  const ledgerGraceMs = options.ledgerGraceMs ?? 10 * 60_000;
  const ledgerRowsWithoutEvent = await findLedgerRowsWithoutEvent(
    deps.db,
    windowStart,
    new Date(now.getTime() - ledgerGraceMs),
    maxReported,
  );

  return {
    // ok: nothing was found (a run that backfilled events is not ok: something had been missing).
    ok: missingEvents.length === 0 && eventsWithoutRows.length === 0 && ledgerRowsWithoutEvent.length === 0,
    dryRun,
    windowDays,
    windowStart: windowStart.toISOString(),
    stripeEvents: drafts.length,
    truncated,
    missingEvents,
    eventsWithoutRows,
    ledgerRowsWithoutEvent,
  };
}

function describe(
  draft: InboxEventDraft,
  createdOf: Map<string, string | null>,
  result: MissingStripeEvent['result'],
  inboxEventId: number | null,
): MissingStripeEvent {
  return {
    eventId: draft.providerEventId,
    type: draft.type,
    createdAt: createdOf.get(draft.providerEventId) ?? null,
    result,
    inboxEventId,
  };
}

/** Processed Stripe events whose outcome promises rows that are not there. */
async function findEventsWithoutRows(db: Kysely<DB>, windowStart: Date, limit: number): Promise<EventWithoutRows[]> {
  const result = await sql<{
    id: number;
    provider_event_id: string;
    type: string;
    outcome_code: string | null;
    no_ids: boolean;
    ledger_missing: string | null;
    payment_missing: string | null;
    refund_missing: string | null;
    subscription_missing: string | null;
  }>`
    WITH candidates AS (
      SELECT i.id, i.provider_event_id, i.type, i.outcome_code,
             CASE
               WHEN i.type = ANY(${paymentTypes}) AND i.outcome_code = ANY(${creditCodes})
                 THEN 'payment'
               WHEN i.type = 'invoice.paid' AND i.outcome_code = ANY(${creditCodes}) THEN 'invoice'
               WHEN i.type = 'charge.refunded' AND i.outcome_code = 'refunded' THEN 'refund'
               WHEN i.type = ANY(${subscriptionTypes}) THEN 'subscription'
             END AS kind,
             CASE
               WHEN i.type = ANY(${paymentTypes}) OR i.type = 'charge.refunded' THEN i.provider_payment_intent_id
               WHEN i.type = 'invoice.paid' THEN i.provider_invoice_id
               ELSE i.provider_subscription_id
             END AS object_id
        FROM inbox_events i
       WHERE i.provider = 'stripe' AND i.status = 'processed' AND i.received_at >= ${windowStart}
    )
    SELECT c.id, c.provider_event_id, c.type, c.outcome_code,
           c.object_id IS NULL AS no_ids,
           CASE WHEN c.kind IN ('payment', 'invoice') AND c.object_id IS NOT NULL AND NOT EXISTS (
                  SELECT 1 FROM ledger_entries l
                   WHERE l.reference = (CASE c.kind WHEN 'payment' THEN 'stripe:payment:' ELSE 'stripe:invoice:' END) || c.object_id)
                THEN (CASE c.kind WHEN 'payment' THEN 'stripe:payment:' ELSE 'stripe:invoice:' END) || c.object_id END
             AS ledger_missing,
           CASE WHEN c.kind IN ('payment', 'invoice') AND c.object_id IS NOT NULL AND NOT EXISTS (
                  SELECT 1 FROM payments p WHERE p.provider = 'stripe' AND p.provider_payment_id = c.object_id)
                THEN c.object_id END AS payment_missing,
           CASE WHEN c.kind = 'refund' AND c.object_id IS NOT NULL AND NOT EXISTS (
                  SELECT 1 FROM payments p
                   WHERE p.provider = 'stripe' AND p.provider_payment_id = c.object_id AND p.status = 'refunded')
                THEN c.object_id END AS refund_missing,
           CASE WHEN c.kind = 'subscription' AND c.object_id IS NOT NULL AND NOT EXISTS (
                  SELECT 1 FROM stripe_subscriptions s WHERE s.subscription_id = c.object_id)
                THEN c.object_id END AS subscription_missing
      FROM candidates c
     WHERE c.kind IS NOT NULL
     ORDER BY c.id
  `.execute(db);
  const found: EventWithoutRows[] = [];
  for (const row of result.rows) {
    const missing: string[] = [];
    if (row.no_ids) missing.push('the event names no object id to check');
    if (row.ledger_missing) missing.push(`ledger entry ${row.ledger_missing}`);
    if (row.payment_missing) missing.push(`payments row for ${row.payment_missing}`);
    if (row.refund_missing) missing.push(`refunded payments row for ${row.refund_missing}`);
    if (row.subscription_missing) missing.push(`stripe_subscriptions row ${row.subscription_missing}`);
    if (missing.length === 0) continue;
    found.push({
      inboxEventId: Number(row.id),
      eventId: row.provider_event_id,
      type: row.type,
      outcomeCode: row.outcome_code,
      missing,
    });
    if (found.length >= limit) break;
  }
  return found;
}

/** `stripe:*` ledger rows of the window that no inbox event accounts for. */
async function findLedgerRowsWithoutEvent(
  db: Kysely<DB>,
  windowStart: Date,
  olderThan: Date,
  limit: number,
): Promise<LedgerRowWithoutEvent[]> {
  const result = await sql<{ id: number; reference: string; user_id: string; amount: number; created_at: Date }>`
    SELECT l.id, l.reference, l.user_id, l.amount, l.created_at
      FROM ledger_entries l
     WHERE l.reference LIKE 'stripe:%'
       AND l.reference NOT LIKE 'stripe:installment:%'
       AND l.created_at >= ${windowStart}
       AND l.created_at < ${olderThan}
       AND NOT EXISTS (
         SELECT 1 FROM inbox_events i
          WHERE i.provider = 'stripe'
            AND (i.id = l.inbox_event_id
                 OR (l.reference LIKE 'stripe:payment:%'
                     AND i.provider_payment_intent_id = substr(l.reference, length('stripe:payment:') + 1))
                 OR (l.reference LIKE 'stripe:invoice:%'
                     AND i.provider_invoice_id = substr(l.reference, length('stripe:invoice:') + 1))))
     ORDER BY l.id
     LIMIT ${limit}
  `.execute(db);
  return result.rows.map((row) => ({
    ledgerEntryId: Number(row.id),
    reference: row.reference,
    userId: row.user_id,
    amount: Number(row.amount),
    createdAt: row.created_at.toISOString(),
  }));
}
