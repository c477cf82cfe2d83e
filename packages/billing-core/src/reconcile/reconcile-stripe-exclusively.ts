import { RECONCILE_STRIPE_LOCK_KEY } from '../db/advisory-locks';
import { runWithAdvisoryTryLock } from '../db/run-with-advisory-try-lock';
import {
  type ReconcileStripeDeps,
  type ReconcileStripeOptions,
  reconcileStripe,
  type StripeReconciliationReport,
} from './reconcile-stripe';

export type ExclusiveReconciliationResult =
  | { kind: 'reconciled'; report: StripeReconciliationReport }
  /** Another process holds the reconciliation lock: it is running a pass right now. */
  | { kind: 'skipped'; reason: 'running-elsewhere' };

/**
 * reconcileStripe under a Postgres advisory try-lock, for the scheduled loop: however many worker
 * replicas run the reconcile role, one pass runs at a time and a replica that finds the lock held
 * skips its turn instead of listing Stripe's events a second time. (A second pass would be safe,
 * the inbox's unique index dedupes the backfill, but it spends Stripe API calls for nothing.)
 * Manual runs (`POST /admin/reconcile/stripe`, `tally reconcile`) do not take the lock.
 * Throws what reconcileStripe throws.
 */
export async function reconcileStripeExclusively(
  deps: ReconcileStripeDeps,
  options: ReconcileStripeOptions,
): Promise<ExclusiveReconciliationResult> {
  const result = await runWithAdvisoryTryLock(deps.db, RECONCILE_STRIPE_LOCK_KEY, () => reconcileStripe(deps, options));
  return result.kind === 'ran'
    ? { kind: 'reconciled', report: result.value }
    : { kind: 'skipped', reason: 'running-elsewhere' };
}
