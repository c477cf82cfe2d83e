import { sql } from 'kysely';
import { referencePrefixes } from '../references';
import type { UnitOfWork } from '../unit-of-work/unit-of-work';

// An auto top-up's top-up (docs/auto-topup.md): its reference, and what its paid transition does
// to the attempt. Here, in the top-up path, so auto-topup/ builds on topups/ and never the reverse.

/** An attempt's reference: its top-up's reference, Stripe's idempotency key and its metadata. */
export function autoTopupReference(attemptId: string): string {
  return `${referencePrefixes.autoTopup}${attemptId}`;
}

/** The attempt a top-up reference names, or null for a top-up the app started. */
export function attemptIdOfTopup(reference: string): string | null {
  return reference.startsWith(referencePrefixes.autoTopup) ? reference.slice(referencePrefixes.autoTopup.length) : null;
}

/**
 * The attempt's top-up was paid (settleTopup, the one pending → paid transition of every top-up,
 * from the webhook, a retrieve or the charge's own answer): the attempt succeeded, whatever it was
 * before (a failed attempt whose customer later paid on session succeeds too), and the failures
 * in a row start again. In the credit's transaction.
 */
export async function markAutoTopupSucceeded(
  uow: UnitOfWork,
  attemptId: string,
  paymentIntentId: string,
): Promise<void> {
  await sql`
    WITH a AS (
      UPDATE auto_topup_attempts
         SET status = 'succeeded', payment_intent_id = ${paymentIntentId}, locked_until = NULL,
             finished_at = coalesce(finished_at, now()), updated_at = now()
       WHERE id = ${attemptId} AND status <> 'succeeded'
      RETURNING user_id)
    UPDATE auto_topup_settings s SET failures_in_a_row = 0, updated_at = now()
      FROM a WHERE s.user_id = a.user_id AND s.failures_in_a_row <> 0`.execute(uow.trx);
}
