import { sql } from 'kysely';
import { writeAppWebhookMessage } from '../app-webhooks/write-app-webhook-message';
import type { AutoTopupAttemptRow, AutoTopupDisabledReason } from '../db/schema';
import type { UnitOfWork } from '../unit-of-work/unit-of-work';

/** Failures in a row that turn auto top-up off until the app enables it again. */
export const autoTopupFailuresToDisable = 3;

export interface AutoTopupFailure {
  /** Stripe's decline code or error code (`insufficient_funds`, `authentication_required`, …). */
  code: string;
  message: string;
  /** The bank wants the customer: the app brings them back on session with the client secret. */
  requiresAction: boolean;
  clientSecret: string | null;
  paymentIntentId: string | null;
  /**
   * Whether it counts toward the three in a row (a refusal of the charge: a decline, the bank
   * asking for the customer, Stripe refusing the request); Stripe unreachable for a day does not.
   */
  counts: boolean;
}

export type FailAutoTopupResult =
  | { kind: 'failed'; failuresInARow: number; disabled: boolean }
  /** The attempt had already ended (succeeded by the webhook meanwhile, or failed by another run). */
  | { kind: 'already-finished' };

/**
 * Ends an attempt unpaid, in one transaction: the attempt `failed` (only from pending or
 * processing), the failures in a row counted, auto top-up turned off at the third
 * (`disabled_reason = 'failures'`), and the app told: `wallet.auto_topup_failed`, then
 * `wallet.auto_topup_disabled` when this failure turned it off.
 */
export async function failAutoTopupAttempt(
  uow: UnitOfWork,
  attempt: Pick<AutoTopupAttemptRow, 'id' | 'user_id'>,
  failure: AutoTopupFailure,
): Promise<FailAutoTopupResult> {
  // guard: auto-topup-three-failures-disable
  const ended = await sql<{ failures_in_a_row: number | null; disabled: boolean | null }>`
    WITH a AS (
      UPDATE auto_topup_attempts
         SET status = 'failed', failure_code = ${failure.code}, failure_message = ${failure.message.slice(0, 1_000)},
             requires_action = ${failure.requiresAction},
             payment_intent_id = coalesce(${failure.paymentIntentId}, payment_intent_id),
             locked_until = NULL, finished_at = now(), updated_at = now()
       WHERE id = ${attempt.id} AND status IN ('pending', 'processing')
      RETURNING user_id),
    s AS (
      UPDATE auto_topup_settings s
         SET failures_in_a_row = s.failures_in_a_row + 1,
             enabled = s.enabled AND s.failures_in_a_row + 1 < ${autoTopupFailuresToDisable},
             disabled_reason = CASE WHEN s.enabled AND s.failures_in_a_row + 1 >= ${autoTopupFailuresToDisable}
                                    THEN 'failures' ELSE s.disabled_reason END,
             updated_at = now()
        FROM a WHERE s.user_id = a.user_id AND ${failure.counts}::boolean
      RETURNING s.failures_in_a_row, (NOT s.enabled AND s.disabled_reason = 'failures'
                                      AND s.failures_in_a_row = ${autoTopupFailuresToDisable}) AS disabled)
    SELECT (SELECT failures_in_a_row FROM s) AS failures_in_a_row, (SELECT disabled FROM s) AS disabled
      FROM a`.execute(uow.trx);
  const row = ended.rows[0];
  if (!row) return { kind: 'already-finished' };
  const failuresInARow = Number(row.failures_in_a_row ?? 0);
  const disabled = row.disabled === true;
  await writeAppWebhookMessage(uow, {
    type: 'wallet.auto_topup_failed',
    userId: attempt.user_id,
    data: {
      userId: attempt.user_id,
      attemptId: attempt.id,
      code: failure.code,
      requiresAction: failure.requiresAction,
      clientSecret: failure.clientSecret,
    },
  });
  if (disabled) await writeDisabled(uow, attempt.user_id, 'failures', failuresInARow);
  return { kind: 'failed', failuresInARow, disabled };
}

async function writeDisabled(
  uow: UnitOfWork,
  userId: string,
  reason: AutoTopupDisabledReason,
  failuresInARow: number,
): Promise<void> {
  await writeAppWebhookMessage(uow, {
    type: 'wallet.auto_topup_disabled',
    userId,
    data: { userId, reason, failuresInARow },
  });
}

/**
 * Support turns a user's auto top-up off (the console's button, `POST /admin/users/{userId}/auto-topup/disable`):
 * `disabled_reason = 'operator'`, the app told (`wallet.auto_topup_disabled`). An attempt already
 * charging finishes. Returns whether it was on.
 */
export async function disableAutoTopup(uow: UnitOfWork, userId: string): Promise<boolean> {
  const turned = await sql<{ failures_in_a_row: number }>`
    UPDATE auto_topup_settings SET enabled = false, disabled_reason = 'operator', updated_at = now()
     WHERE user_id = ${userId} AND enabled
    RETURNING failures_in_a_row`.execute(uow.trx);
  const row = turned.rows[0];
  if (!row) return false;
  await writeDisabled(uow, userId, 'operator', Number(row.failures_in_a_row));
  return true;
}
