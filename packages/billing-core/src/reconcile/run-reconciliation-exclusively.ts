import { runWithLease } from '@tally/platform/db';
import type { Kysely } from 'kysely';
import type { DB } from '../db/schema';
import { BillingError } from '../errors';

/** The window asked for is outside what the provider keeps (`invalid_window`). */
export class ReconcileWindowError extends BillingError {
  constructor(windowDays: number, limit: { maxDays: number; keeps: string }) {
    super(
      'invalid_window',
      `the window must be between 1 and ${limit.maxDays} days (${limit.keeps}), got ${windowDays}`,
      {
        retryable: false,
      },
    );
  }
}

/**
 * How long a reconciliation lease holds without renewal; renewed every third of it while a pass
 * runs, so only a dead or frozen replica's pass is taken over, a minute later.
 */
export const RECONCILIATION_LEASE_TTL_MS = 60_000;

export type ExclusiveRun<Report> =
  /** `leaseLost`: the pass outlived its lease (this process stalled) and another may have run too. */
  | { kind: 'reconciled'; report: Report; leaseLost: boolean }
  /** Another process holds the reconciliation's lease: it is running a pass right now. */
  | { kind: 'skipped'; reason: 'running-elsewhere' };

/**
 * A reconciliation pass under its lease (db/run-with-lease.ts, a name of db/lease-names.ts), for
 * the scheduled loops: however many worker replicas run the role, one pass runs at a time and a
 * replica that finds the lease held skips its turn instead of reading the provider a second time.
 * (A second pass would be safe, the inbox's unique index dedupes the backfill, but it spends API
 * calls for nothing.) A lease rather than a session advisory lock: behind PgBouncer in
 * transaction mode the lock and its unlock would run on different server connections. Manual
 * runs (the admin routes, `tally reconcile`) do not take it. Throws what `run` throws.
 */
export async function runReconciliationExclusively<Report>(
  db: Kysely<DB>,
  lease: { name: string; ttlMs?: number },
  run: () => Promise<Report>,
): Promise<ExclusiveRun<Report>> {
  const result = await runWithLease(db, { name: lease.name, ttlMs: lease.ttlMs ?? RECONCILIATION_LEASE_TTL_MS }, run);
  return result.kind === 'ran'
    ? { kind: 'reconciled', report: result.value, leaseLost: result.lost }
    : { kind: 'skipped', reason: 'running-elsewhere' };
}
