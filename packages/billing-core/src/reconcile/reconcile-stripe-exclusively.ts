import { RECONCILE_STRIPE_LEASE } from '../db/lease-names';
import {
  type ReconcileStripeDeps,
  type ReconcileStripeOptions,
  reconcileStripe,
  type StripeReconciliationReport,
} from './reconcile-stripe';
import { type ExclusiveRun, runReconciliationExclusively } from './run-reconciliation-exclusively';

export type ExclusiveReconciliationResult = ExclusiveRun<StripeReconciliationReport>;

/**
 * reconcileStripe under its lease (runReconciliationExclusively), for the scheduled loop: one pass
 * at a time across the replicas of the reconcile role. Manual runs (`POST /admin/reconcile/stripe`,
 * `tally reconcile`) do not take it. Throws what reconcileStripe throws.
 */
export function reconcileStripeExclusively(
  deps: ReconcileStripeDeps,
  options: ReconcileStripeOptions,
  lease: { ttlMs?: number } = {},
): Promise<ExclusiveReconciliationResult> {
  return runReconciliationExclusively(deps.db, { name: RECONCILE_STRIPE_LEASE, ...lease }, () =>
    reconcileStripe(deps, options),
  );
}
