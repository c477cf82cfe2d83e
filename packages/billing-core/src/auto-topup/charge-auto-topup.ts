import { sqlMilliseconds } from '@tally/platform/db';
import { type Kysely, sql } from 'kysely';
import type { Catalog } from '../catalog/catalog';
import type { AutoTopupAttemptRow, DB } from '../db/schema';
import { BillingError, isRetryable, toErrorText } from '../errors';
import { type StripeApi, StripeCardError } from '../ports/stripe-api';
import { stripeIdOf, stripeStringAt } from '../provider-data/stripe-objects';
import { type BackoffSettings, computeBackoffDelayMs } from '../scheduling/backoff';
import { autoTopupReference } from '../topups/auto-topup-top-ups';
import { settleTopup } from '../topups/settle-topup';
import type { AppWebhookOutbox } from '../unit-of-work/app-webhook-outbox';
import { inUnitOfWork } from '../unit-of-work/unit-of-work';
import { lockUser } from '../users/lock-user';
import { type AutoTopupFailure, failAutoTopupAttempt } from './finish-auto-topup';
import { prepareAutoTopupCharge } from './prepare-auto-topup-charge';

export interface AutoTopupChargeDeps {
  db: Kysely<DB>;
  outbox: AppWebhookOutbox;
  catalog: Catalog;
  stripe: StripeApi | undefined;
  /** A claimed attempt is not claimed again before this (AUTO_TOPUP_LEASE_MS): longer than a Stripe call. */
  leaseMs: number;
  /** Delay before asking Stripe again after a timeout or 5xx, and before re-reading a processing charge. */
  backoff: BackoffSettings;
  /**
   * How long after its first call an attempt still asks Stripe with its key (Stripe keeps an
   * idempotency key at least 24 hours): past it the attempt fails unpaid, `stripe_unavailable`
   * (a charge Stripe did make still credits through its webhook).
   */
  resolveWithinMs: number;
}

/**
 * What one run of an attempt came to (the worker's `tally_auto_topup_attempts_total{outcome}`):
 * credited; waiting on a slow method; declined by the bank; the bank wants the customer; failed
 * otherwise (Stripe refused the request, or never answered within the key's life); canceled before
 * any charge; Stripe unreachable, asked again later; ended meanwhile by the webhook or another run.
 */
export const autoTopupChargeOutcomes = [
  'succeeded',
  'processing',
  'declined',
  'requires_action',
  'failed',
  'canceled',
  'retry',
  'finished_elsewhere',
] as const;
export type AutoTopupChargeOutcome = (typeof autoTopupChargeOutcomes)[number];

/**
 * Claims due attempts (pending, or processing and due for a re-read) whose lease is free: tries + 1,
 * leased for leaseMs, SKIP LOCKED (any number of loops may run). A claim whose worker died is due
 * again once its lease ends, and resumes with the same idempotency key: the claim is the relay.
 */
export async function claimAutoTopupAttempts(
  db: Kysely<DB>,
  options: { leaseMs: number; batchSize: number },
): Promise<AutoTopupAttemptRow[]> {
  const rows = await sql<AutoTopupAttemptRow>`
    UPDATE auto_topup_attempts
       SET tries = tries + 1, locked_until = now() + ${sqlMilliseconds(options.leaseMs)},
           first_tried_at = coalesce(first_tried_at, now()), updated_at = now()
     WHERE id IN (SELECT id FROM auto_topup_attempts
                   WHERE status IN ('pending', 'processing') AND next_attempt_at <= now()
                     AND (locked_until IS NULL OR locked_until <= now())
                   ORDER BY next_attempt_at LIMIT ${options.batchSize}
                   FOR UPDATE SKIP LOCKED)
    RETURNING *`.execute(db);
  return rows.rows;
}

/**
 * Runs one claimed attempt (docs/auto-topup.md). A pending one is prepared (its top-up row, or a
 * cancel when auto top-up was turned off or is no longer needed, only before Stripe was ever
 * asked) and charged off session with `autotopup:{id}` as the idempotency key, outside any
 * transaction; a processing one is re-read. The answer is recorded in one transaction: succeeded
 * credits through settleTopup, a decline or the bank asking for the customer fails it
 * (failAutoTopupAttempt), a timeout or 5xx leaves it pending for the same call again.
 */
export async function runAutoTopupAttempt(
  deps: AutoTopupChargeDeps,
  attempt: AutoTopupAttemptRow,
): Promise<{ outcome: AutoTopupChargeOutcome; code?: string }> {
  const reference = autoTopupReference(attempt.id);
  let intent: Record<string, unknown>;
  try {
    if (!deps.stripe)
      throw new BillingError('not_configured', 'the Stripe API (STRIPE_SECRET_KEY) is not configured', {
        retryable: true,
      });
    if (attempt.status === 'processing' && attempt.payment_intent_id !== null) {
      intent = await deps.stripe.retrievePaymentIntent(attempt.payment_intent_id);
    } else {
      const prepared = await prepareAutoTopupCharge(deps, attempt);
      if (prepared.kind === 'canceled') return { outcome: 'canceled', code: prepared.code };
      const { topup } = prepared;
      // guard: auto-topup-same-key
      intent = await deps.stripe.chargeOffSession(
        {
          amountMinor: Number(topup.amount_minor),
          currency: topup.currency,
          customerId: attempt.stripe_customer_id,
          paymentMethodId: attempt.payment_method_id,
          metadata: {
            user_id: attempt.user_id,
            pack_id: topup.pack_id,
            topup_reference: reference,
            auto_topup_attempt: attempt.id,
          },
          description: `Tally auto top-up ${reference}`,
        },
        { idempotencyKey: reference },
      );
    }
  } catch (error) {
    if (error instanceof StripeCardError) return fail(deps, attempt, cardFailure(error));
    if (isRetryable(error)) return retryOrGiveUp(deps, attempt, error);
    const code = error instanceof BillingError ? error.code : 'charge_failed';
    return fail(deps, attempt, {
      code,
      message: toErrorText(error),
      requiresAction: false,
      clientSecret: null,
      paymentIntentId: null,
      counts: true,
    });
  }
  return record(deps, attempt, intent);
}

/** What Stripe answered about the PaymentIntent, recorded. */
async function record(
  deps: AutoTopupChargeDeps,
  attempt: AutoTopupAttemptRow,
  intent: Record<string, unknown>,
): Promise<{ outcome: AutoTopupChargeOutcome; code?: string }> {
  const paymentIntentId = stripeIdOf(intent.id);
  const status = String(intent.status);
  if (status === 'succeeded') {
    const settled = await inUnitOfWork(deps, async (uow) => {
      await lockUser(uow.trx, attempt.user_id);
      return settleTopup(uow, {
        reference: autoTopupReference(attempt.id),
        paymentIntent: intent,
        catalog: deps.catalog,
        inboxEventId: null,
      });
    });
    return { outcome: settled.kind === 'paid' ? 'succeeded' : 'finished_elsewhere' };
  }
  if (status === 'requires_payment_method' || status === 'canceled' || status === 'requires_action') {
    const lastError = (intent.last_payment_error ?? {}) as Record<string, unknown>;
    const code = String(lastError.decline_code ?? lastError.code ?? status);
    return fail(deps, attempt, {
      code,
      message: `payment intent ${paymentIntentId} is ${status}`,
      requiresAction: status === 'requires_action' || code === 'authentication_required',
      clientSecret: stripeStringAt(intent, 'client_secret'),
      paymentIntentId,
      counts: true,
    });
  }
  // processing (a slow method): its webhook or a later re-read ends it.
  const delayMs = computeBackoffDelayMs(attempt.tries, deps.backoff);
  await deps.db
    .updateTable('auto_topup_attempts')
    .set({
      status: 'processing',
      payment_intent_id: paymentIntentId,
      locked_until: null,
      next_attempt_at: sql`now() + ${sqlMilliseconds(delayMs)}`,
      updated_at: sql`now()`,
    })
    .where('id', '=', attempt.id)
    .where('status', 'in', ['pending', 'processing'])
    .execute();
  return { outcome: 'processing' };
}

function cardFailure(error: StripeCardError): AutoTopupFailure {
  const intent = error.paymentIntent;
  const requiresAction = error.stripeCode === 'authentication_required';
  return {
    code: requiresAction ? 'authentication_required' : (error.declineCode ?? error.stripeCode),
    message: error.message,
    requiresAction,
    clientSecret: intent ? stripeStringAt(intent, 'client_secret') : null,
    paymentIntentId: intent ? stripeIdOf(intent.id) : null,
    counts: true,
  };
}

async function fail(
  deps: AutoTopupChargeDeps,
  attempt: AutoTopupAttemptRow,
  failure: AutoTopupFailure,
): Promise<{ outcome: AutoTopupChargeOutcome; code?: string }> {
  const failed = await inUnitOfWork(deps, (uow) => failAutoTopupAttempt(uow, attempt, failure));
  if (failed.kind === 'already-finished') return { outcome: 'finished_elsewhere' };
  const outcome = failure.requiresAction
    ? 'requires_action'
    : failure.counts && failure.paymentIntentId
      ? 'declined'
      : 'failed';
  return { outcome, code: failure.code };
}

/**
 * Stripe did not answer (timeout, 5xx, 429, network): the charge may or may not have been made, so
 * the attempt stays as it is and asks again later with the same key (Stripe replays the first
 * answer): never a second charge. Past resolveWithinMs from its first call it fails unpaid.
 */
async function retryOrGiveUp(
  deps: AutoTopupChargeDeps,
  attempt: AutoTopupAttemptRow,
  error: unknown,
): Promise<{ outcome: AutoTopupChargeOutcome; code?: string }> {
  const code = error instanceof BillingError ? error.code : 'stripe_unavailable';
  const firstTriedAt = attempt.first_tried_at === null ? Date.now() : new Date(attempt.first_tried_at).getTime();
  if (Date.now() - firstTriedAt >= deps.resolveWithinMs) {
    const message = `Stripe did not answer within ${deps.resolveWithinMs} ms of the first call: ${toErrorText(error)}`;
    return fail(deps, attempt, {
      code: 'stripe_unavailable',
      message,
      requiresAction: false,
      clientSecret: null,
      paymentIntentId: null,
      counts: false,
    });
  }
  const delayMs = computeBackoffDelayMs(attempt.tries, deps.backoff);
  await deps.db
    .updateTable('auto_topup_attempts')
    .set({
      locked_until: null,
      next_attempt_at: sql`now() + ${sqlMilliseconds(delayMs)}`,
      failure_code: code,
      failure_message: toErrorText(error).slice(0, 1_000),
      updated_at: sql`now()`,
    })
    .where('id', '=', attempt.id)
    .where('status', 'in', ['pending', 'processing'])
    .execute();
  return { outcome: 'retry', code };
}
