import type { StripeReconciliationReport } from './reconcile-stripe';

/** A reconciliation report in a few numbers: what logs and the audit keep of a run. */
export function summarizeReconciliation(report: StripeReconciliationReport) {
  return {
    ok: report.ok,
    dryRun: report.dryRun,
    windowDays: report.windowDays,
    stripeEvents: report.stripeEvents,
    truncated: report.truncated,
    missingEvents: report.missingEvents.length,
    eventsWithoutRows: report.eventsWithoutRows.length,
    ledgerRowsWithoutEvent: report.ledgerRowsWithoutEvent.length,
  };
}
