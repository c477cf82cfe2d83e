import {
  type DB,
  type ExclusiveRun,
  reconcileStripeExclusively,
  type StripeApi,
  type StripeReconciliationReport,
} from '@tally/billing-core';
import type { Logger } from '@tally/platform';
import type { Kysely } from 'kysely';
import { type PeriodicLoop, runPeriodic } from './run-periodic';

/**
 * The report of a reconciliation pass run under its lease, or undefined when another replica held
 * the lease and this tick was skipped (logged at info); a pass that outlived its lease is logged.
 */
export function reportOfExclusiveRun<Report>(
  result: ExclusiveRun<Report>,
  logger: Logger,
  provider: 'Stripe' | 'Apple',
): Report | undefined {
  if (result.kind === 'skipped') {
    logger.info(`another replica is reconciling with ${provider} right now; this tick is skipped`);
    return undefined;
  }
  if (result.leaseLost) {
    logger.warn(
      `this ${provider} reconciliation pass outlived its lease (the process stalled); another replica may have run one too`,
    );
  }
  return result.report;
}

export interface ReconcileLoopOptions {
  intervalMs: number;
  windowDays: number;
}

/**
 * Stripe reconciliation on a schedule (role 'reconcile', opt-in). Backfills missing events and
 * logs what it found; `onReport` receives each report (metrics). Without a Stripe API it logs
 * once per tick that it cannot run. Safe on any number of replicas: each pass runs under a
 * lease in Postgres (reconcileStripeExclusively), so while one replica reconciles the others skip
 * their tick (and leave their metrics as they were).
 */
export function startReconcileLoop(
  deps: {
    db: Kysely<DB>;
    stripe: StripeApi | undefined;
    enqueue: (inboxEventIds: number[]) => Promise<unknown>;
    logger: Logger;
    onReport?: (report: StripeReconciliationReport) => void;
  },
  options: ReconcileLoopOptions,
): PeriodicLoop {
  return runPeriodic(
    'reconcile',
    options.intervalMs,
    async () => {
      if (!deps.stripe) {
        deps.logger.warn('the reconcile role runs but STRIPE_SECRET_KEY is not set: nothing to reconcile');
        return;
      }
      const report = reportOfExclusiveRun(
        await reconcileStripeExclusively(
          { db: deps.db, stripe: deps.stripe, enqueue: deps.enqueue },
          { windowDays: options.windowDays },
        ),
        deps.logger,
        'Stripe',
      );
      if (!report) return;
      deps.onReport?.(report);
      const summary = {
        windowDays: report.windowDays,
        stripeEvents: report.stripeEvents,
        missingEvents: report.missingEvents.length,
        eventsWithoutRows: report.eventsWithoutRows.length,
        ledgerRowsWithoutEvent: report.ledgerRowsWithoutEvent.length,
        truncated: report.truncated,
      };
      if (report.eventsWithoutRows.length > 0 || report.ledgerRowsWithoutEvent.length > 0) {
        deps.logger.error(
          {
            ...summary,
            eventsWithoutRowsList: report.eventsWithoutRows,
            ledgerRowsWithoutEventList: report.ledgerRowsWithoutEvent,
          },
          'Stripe reconciliation found money rows out of step with events; investigate',
        );
      } else if (report.missingEvents.length > 0) {
        deps.logger.warn(
          { ...summary, backfilled: report.missingEvents.map((event) => event.eventId) },
          'Stripe reconciliation backfilled events the inbox lacked',
        );
      } else {
        deps.logger.info(summary, 'Stripe reconciliation found nothing');
      }
    },
    deps.logger,
  );
}
