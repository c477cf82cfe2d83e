import { randomUUID } from 'node:crypto';
import { hostname } from 'node:os';
import { type Kysely, sql } from 'kysely';
import { sqlMilliseconds } from './sql-milliseconds';

// Leases are rows of the table `leases` (name text primary key, holder text, acquired_at and
// expires_at timestamptz), which the application's migrations create (billing-core's 0016_leases.sql).

export interface LeaseOptions {
  /** The lease's name: one of the application's registry (billing-core's db/lease-names.ts). */
  name: string;
  /** How long a claim or a renewal holds the lease; a holder that stops renewing loses it after this. */
  ttlMs: number;
  /** How often the holder renews while it works (default a third of ttlMs). */
  renewEveryMs?: number;
}

export type LeaseRunResult<T> =
  /** `lost`: another claimed the lease while `work` ran (this holder had stalled past the expiry). */
  | { kind: 'ran'; value: T; lost: boolean }
  /** Another holder's unexpired lease. */
  | { kind: 'busy' };

/** A holder name operators can trace to a process (`host/pid/random`), unique per claim. */
export function newLeaseHolder(): string {
  return `${hostname()}/${process.pid}/${randomUUID().slice(0, 8)}`;
}

/**
 * Claims the lease `name` for `holder` until the database clock's now + ttlMs, only when nobody
 * holds it or the last holder's expiry has passed (a conditional upsert, so of any number of
 * concurrent claims exactly one wins). One statement, no session state: safe behind PgBouncer.
 */
export async function claimLease<DB>(db: Kysely<DB>, name: string, holder: string, ttlMs: number): Promise<boolean> {
  // guard: lease-expiry-condition
  const { rows } = await sql<{ holder: string }>`
    INSERT INTO leases AS l (name, holder, acquired_at, expires_at)
    VALUES (${name}, ${holder}, now(), now() + ${sqlMilliseconds(ttlMs)})
    ON CONFLICT (name) DO UPDATE
      SET holder = EXCLUDED.holder, acquired_at = EXCLUDED.acquired_at, expires_at = EXCLUDED.expires_at
      WHERE l.expires_at <= now()
    RETURNING holder`.execute(db);
  return rows[0]?.holder === holder;
}

/** Extends `holder`'s lease by ttlMs from now; false when the lease is no longer its own. */
export async function renewLease<DB>(db: Kysely<DB>, name: string, holder: string, ttlMs: number): Promise<boolean> {
  const result = await sql`
    UPDATE leases SET expires_at = now() + ${sqlMilliseconds(ttlMs)}
     WHERE name = ${name} AND holder = ${holder}`.execute(db);
  return (result.numAffectedRows ?? 0n) > 0n;
}

/**
 * Gives the lease up if `holder` still has it, so the next claim need not wait for the expiry.
 * False when it was no longer `holder`'s (it expired and another claimed it meanwhile).
 */
export async function releaseLease<DB>(db: Kysely<DB>, name: string, holder: string): Promise<boolean> {
  const result = await sql`DELETE FROM leases WHERE name = ${name} AND holder = ${holder}`.execute(db);
  return (result.numAffectedRows ?? 0n) > 0n;
}

/**
 * Runs `work` only if the lease can be claimed at once, so of several replicas asking together
 * exactly one runs and the others get `busy` without waiting. No transaction and no connection is
 * held while `work` runs (it may call third parties); the lease is renewed every renewEveryMs and
 * released when `work` settles. A holder that dies or freezes stops renewing: after ttlMs another
 * may claim it, so `work` must stay safe to run twice (a lease bounds duplicate work, it is not a
 * mutual-exclusion guarantee for money). A failed renewal (database briefly away) is retried on
 * the next tick. Rethrows what `work` throws (after releasing).
 */
export async function runWithLease<DB, T>(
  db: Kysely<DB>,
  options: LeaseOptions,
  work: () => Promise<T>,
): Promise<LeaseRunResult<T>> {
  const holder = newLeaseHolder();
  if (!(await claimLease(db, options.name, holder, options.ttlMs))) return { kind: 'busy' };
  let lost = false;
  let renewing: Promise<void> = Promise.resolve();
  const timer = setInterval(
    () => {
      renewing = renewLease(db, options.name, holder, options.ttlMs).then(
        (kept) => {
          if (!kept) {
            lost = true;
            clearInterval(timer);
          }
        },
        () => undefined,
      );
    },
    options.renewEveryMs ?? Math.max(1, Math.floor(options.ttlMs / 3)),
  );
  let value: T;
  try {
    value = await work();
  } finally {
    clearInterval(timer);
    await renewing;
    // Deletes nothing when the lease was lost (it is conditional on the holder), which also
    // tells of a loss that no renewal saw. A failed release leaves the lease to expire.
    const released = await releaseLease(db, options.name, holder).catch(() => true);
    if (!released) lost = true;
  }
  return { kind: 'ran', value, lost };
}
