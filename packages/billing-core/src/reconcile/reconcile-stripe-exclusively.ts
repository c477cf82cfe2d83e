import { runWithLease } from '@tally/platform/db';
import { RECONCILE_STRIPE_LEASE } from '../db/lease-names';
import {
  type ReconcileStripeDeps,
  type ReconcileStripeOptions,
  reconcileStripe,
  type StripeReconciliationReport,
} from './reconcile-stripe';

export type ExclusiveReconciliationResult =
  /** `leaseLost`: the pass outlived its lease (this process stalled) and another may have run too. */
  | { kind: 'reconciled'; report: StripeReconciliationReport; leaseLost: boolean }
  /** Another process holds the reconciliation lease: it is running a pass right now. */
  | { kind: 'skipped'; reason: 'running-elsewhere' };

/**
 * How long a reconciliation lease holds without renewal; renewed every third of it while a pass
 * runs, so only a dead or frozen replica's pass is taken over, a minute later.
 */
export const RECONCILE_STRIPE_LEASE_TTL_MS = 60_000;

/**
 * reconcileStripe under a lease (db/run-with-lease.ts), for the scheduled loop: however many
 * worker replicas run the reconcile role, one pass runs at a time and a replica that finds the
 * lease held skips its turn instead of listing Stripe's events a second time. (A second pass
 * would be safe, the inbox's unique index dedupes the backfill, but it spends Stripe API calls for
 * nothing.) A lease rather than a session advisory lock: behind PgBouncer in transaction mode the
 * lock and its unlock would run on different server connections. Manual runs
 * (`POST /admin/reconcile/stripe`, `tally reconcile`) do not take it. Throws what reconcileStripe
 * throws.
 */
export async function reconcileStripeExclusively(
  deps: ReconcileStripeDeps,
  options: ReconcileStripeOptions,
  lease: { ttlMs: number } = { ttlMs: RECONCILE_STRIPE_LEASE_TTL_MS },
): Promise<ExclusiveReconciliationResult> {
  const result = await runWithLease(deps.db, { name: RECONCILE_STRIPE_LEASE, ttlMs: lease.ttlMs }, () =>
    reconcileStripe(deps, options),
  );
  return result.kind === 'ran'
    ? { kind: 'reconciled', report: result.value, leaseLost: result.lost }
    : { kind: 'skipped', reason: 'running-elsewhere' };
}
