import { randomBytes } from 'node:crypto';
import { type RawBuilder, sql } from 'kysely';
import type { UserSql } from '../db/user-sql';
import type { UnitOfWork } from '../unit-of-work/unit-of-work';

/**
 * What a spend reads of the user's auto top-up under the wallet lock (in lockWalletForSpend's one
 * read statement): the threshold, when auto top-up is on with a saved card; null otherwise (the
 * user never opted in, turned it off, or has no card): such a spend writes nothing more.
 */
export interface AutoTopupTrigger {
  threshold: number;
}

/**
 * The scalar sub-select lockWalletForSpend adds (the threshold, or NULL): one primary-key probe of
 * each of two small tables, no row built.
 */
export function autoTopupThresholdSql(userId: UserSql): RawBuilder<number | null> {
  return sql<number | null>`
    SELECT s.threshold FROM auto_topup_settings s
      JOIN saved_payment_methods pm ON pm.user_id = s.user_id
     WHERE s.user_id = ${userId} AND s.enabled`;
}

export function autoTopupTriggerOf(threshold: number | string | null | undefined): AutoTopupTrigger | null {
  return threshold === null || threshold === undefined ? null : { threshold: Number(threshold) };
}

/** A new attempt's id: `at_` and 24 random hex characters (random: unique in a Stripe account across databases). */
export function newAutoTopupAttemptId(): string {
  return `at_${randomBytes(12).toString('hex')}`;
}

/**
 * The trigger (docs/auto-topup.md), called by every spend (debits, usage, holds placed, studio
 * debits) once it has spent, in its own transaction under the wallet lock: when the spend left
 * `available` below the user's threshold, writes the durable attempt row, unless one of the user's
 * attempts is in flight or the month's limit is reached (attempts in flight or succeeded since the
 * first of the UTC month), both counted in the same statement under the wallet lock every spend
 * takes. The unique index on attempts in flight is the database's fence behind it: a second one
 * would fail the spend, never charge twice. The charge happens after commit, from the row (the
 * auto-topup worker loop). Returns the attempt's id, or null when none was written.
 */
export async function triggerAutoTopup(
  uow: UnitOfWork,
  userId: string,
  trigger: AutoTopupTrigger | null,
  availableAfter: number,
): Promise<string | null> {
  // guard: auto-topup-threshold
  if (trigger === null || availableAfter >= trigger.threshold) return null;
  const id = newAutoTopupAttemptId();
  // guard: auto-topup-one-in-flight
  // guard: auto-topup-monthly-limit
  const written = await sql<{ id: string }>`
    INSERT INTO auto_topup_attempts (id, user_id, pack_id, threshold, available_after, stripe_customer_id, payment_method_id)
    SELECT ${id}, s.user_id, s.pack_id, s.threshold, ${availableAfter}, pm.stripe_customer_id, pm.payment_method_id
      FROM auto_topup_settings s
      JOIN saved_payment_methods pm ON pm.user_id = s.user_id
     WHERE s.user_id = ${userId} AND s.enabled
       AND NOT EXISTS (SELECT 1 FROM auto_topup_attempts a
                        WHERE a.user_id = s.user_id AND a.status IN ('pending', 'processing'))
       AND (SELECT count(*) FROM auto_topup_attempts a
             WHERE a.user_id = s.user_id AND a.status IN ('pending', 'processing', 'succeeded')
               AND a.created_at >= date_trunc('month', now() AT TIME ZONE 'UTC') AT TIME ZONE 'UTC') < s.monthly_limit
    RETURNING id`.execute(uow.trx);
  return written.rows[0]?.id ?? null;
}
