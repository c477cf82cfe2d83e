import type { Kysely } from 'kysely';
import { type Clock, systemClock } from '../clock';
import type { DB } from '../db/schema';
import type { StripeApi } from '../ports/stripe-api';
import { backfillMissingStripeEvents, type MissingStripeEvent } from './backfill-missing-stripe-events';
import { type EventWithoutRows, findStripeEventsWithoutRows } from './find-stripe-events-without-rows';
import { findStripeLedgerRowsWithoutEvent, type LedgerRowWithoutEvent } from './find-stripe-ledger-rows-without-event';
import { ReconcileWindowError } from './run-reconciliation-exclusively';

export type { MissingStripeEvent } from './backfill-missing-stripe-events';
export type { EventWithoutRows } from './find-stripe-events-without-rows';
export type { LedgerRowWithoutEvent } from './find-stripe-ledger-rows-without-event';

/** Stripe's Events API keeps events for 30 days. */
export const STRIPE_EVENTS_MAX_WINDOW_DAYS = 30;
/**
 * The window when nobody names one: the schemas of the worker's RECONCILE_WINDOW_DAYS, the
 * admin route's body and the CLI's --days read it; reconcileStripe itself takes the window from its caller.
 */
export const DEFAULT_RECONCILE_WINDOW_DAYS = 3;
const DAY_MS = 24 * 3600_000;

export interface ReconcileStripeOptions {
  /** Days back from now (at most 30). Fractions are allowed (tests, short windows). */
  windowDays: number;
  /** Report only: missing events are listed, not ingested. */
  dryRun?: boolean;
  /** Ledger rows younger than this are not reported as "without an event" (their webhook may be in flight). */
  ledgerGraceMs?: number;
  /** Stops listing after this many events (the report says `truncated`). */
  maxEvents?: number;
  /** Rows of each discrepancy list reported at most. */
  maxReported?: number;
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
  /** "Now", from which the window and the ledger grace period count back (default the system clock). */
  clock?: Clock;
}

/**
 * Stripe reconciliation over a window (default 3 days, at most Stripe's 30), three jobs in turn:
 *
 * 1. **Backfill** the events Stripe has that the inbox lacks (backfillMissingStripeEvents).
 * 2. **Events processed without their rows** (findStripeEventsWithoutRows).
 * 3. **Ledger rows without an event**, older than the grace period (findStripeLedgerRowsWithoutEvent).
 *
 * A second run finds nothing new: what the first ingested is in the inbox. Reports, never repairs
 * money rows. Throws ReconcileWindowError for a window outside 1..30 days, and what the Stripe API
 * port throws.
 */
export async function reconcileStripe(
  deps: ReconcileStripeDeps,
  options: ReconcileStripeOptions,
): Promise<StripeReconciliationReport> {
  const { windowDays } = options;
  if (!(windowDays > 0 && windowDays <= STRIPE_EVENTS_MAX_WINDOW_DAYS)) {
    throw new ReconcileWindowError(windowDays, {
      maxDays: STRIPE_EVENTS_MAX_WINDOW_DAYS,
      keeps: 'Stripe keeps events 30 days',
    });
  }
  const dryRun = options.dryRun ?? false;
  const maxReported = options.maxReported ?? 1_000;
  // guard: reconcile-clock
  const now = (deps.clock ?? systemClock).now();
  const windowStart = new Date(now.getTime() - windowDays * DAY_MS);
  const ledgerGraceMs = options.ledgerGraceMs ?? 10 * 60_000;

  const backfill = await backfillMissingStripeEvents(deps, {
    windowStart,
    dryRun,
    maxEvents: options.maxEvents ?? 50_000,
  });
  const eventsWithoutRows = await findStripeEventsWithoutRows(deps.db, windowStart, maxReported);
  const ledgerRowsWithoutEvent = await findStripeLedgerRowsWithoutEvent(
    deps.db,
    windowStart,
    new Date(now.getTime() - ledgerGraceMs),
    maxReported,
  );

  return {
    // ok: nothing was found (a run that backfilled events is not ok: something had been missing).
    ok: backfill.missingEvents.length === 0 && eventsWithoutRows.length === 0 && ledgerRowsWithoutEvent.length === 0,
    dryRun,
    windowDays,
    windowStart: windowStart.toISOString(),
    stripeEvents: backfill.stripeEvents,
    truncated: backfill.truncated,
    missingEvents: backfill.missingEvents,
    eventsWithoutRows,
    ledgerRowsWithoutEvent,
  };
}
