import {
  type AppWebhookOutbox,
  BillingError,
  type Catalog,
  confirmTopup,
  createTopup,
  type DB,
  IdempotencyLeaseLostError,
  RetryLaterError,
  type StartedTopup,
  type StripeApi,
  TopupNotPaidError,
} from '@tally/billing-core';
import { Router } from 'express';
import type { Kysely } from 'kysely';
import { z } from 'zod';
import { errorAnswer, type RouteAnswer } from '../../http/answer';
import { httpStatusByBillingErrorCode } from '../../http/billing-error-statuses';
import type { IdempotentPosts } from '../../http/idempotency';
import { parseOrAnswer } from '../../http/params';
import { userScopeOf } from '../../http/user-scope';

const createSchema = z.object({ packId: z.string().min(1).max(255) });
const referenceSchema = z.string().regex(/^tu_[A-Za-z0-9]{8,64}$/);

/** The answer to a billing error, or undefined for one the caller rethrows. */
function billingErrorAnswer(error: unknown): RouteAnswer | undefined {
  // Another attempt runs this request's Idempotency-Key now: the idempotent POST answers 409.
  if (!(error instanceof BillingError) || error instanceof IdempotencyLeaseLostError) return undefined;
  const status: number = httpStatusByBillingErrorCode[error.code];
  const answer = errorAnswer(status, error.code, status >= 500 ? 'the payment provider is unavailable' : error.message);
  if (error instanceof TopupNotPaidError) {
    answer.body = { error: { code: error.code, message: error.message }, paymentStatus: error.paymentStatus };
  }
  if (error instanceof RetryLaterError && error.delayMs !== undefined) {
    answer.headers = { 'retry-after': String(Math.ceil(error.delayMs / 1000)) };
  }
  // A retry may get another answer (409 topup_not_paid until the intent succeeded): not final.
  return { ...answer, retryable: error.retryable };
}

/** The 201 of a started top-up; with an Idempotency-Key it commits with the intent's id. */
function toStartedAnswer(topup: StartedTopup) {
  return {
    status: 201,
    body: { reference: topup.reference, clientSecret: topup.clientSecret, status: topup.status },
  };
}

/**
 * Stripe top-ups: `POST /users/{userId}/topups {packId}` starts one (pending row + PaymentIntent)
 * and `POST /users/{userId}/topups/{reference}/confirm` credits it once the intent succeeded.
 * Mounted by createUserRoutes: the top-up, the intent's `metadata.user_id` and the credit are the
 * canonical user's, whichever linked id the path names.
 */
export function createTopupRoutes(deps: {
  db: Kysely<DB>;
  /** The confirm's wallet.credited, handed off after the commit. */
  outbox: AppWebhookOutbox;
  catalog?: Catalog;
  stripe?: StripeApi | undefined;
  idempotency: IdempotentPosts;
}): Router {
  const router = Router();
  // The pending row commits with the key's recovery point, the intent's id with its answer.
  router.post(
    '/topups',
    deps.idempotency.claimed(async (req, res, claim) => {
      const { userId } = userScopeOf(res);
      const body = parseOrAnswer(createSchema, req.body ?? {});
      if (!body.ok) return body.answer;
      if (!deps.catalog) return errorAnswer(503, 'not_configured', 'top-ups are not configured');
      try {
        const topup = await createTopup(
          { db: deps.db, catalog: deps.catalog, stripe: deps.stripe },
          { userId, packId: body.value.packId },
          claim && { claim, answer: toStartedAnswer },
        );
        return { ...toStartedAnswer(topup), kept: claim !== undefined };
      } catch (error) {
        return orThrow(billingErrorAnswer(error), error);
      }
    }),
  );
  // Idempotent on its own (the pending → paid transition): its answer is kept after it.
  router.post(
    '/topups/:reference/confirm',
    deps.idempotency.claimed(async (req, res) => {
      const { userId } = userScopeOf(res);
      const reference = parseOrAnswer(referenceSchema, req.params.reference);
      if (!reference.ok) return reference.answer;
      if (!deps.catalog) return errorAnswer(503, 'not_configured', 'top-ups are not configured');
      try {
        const confirmed = await confirmTopup(
          { db: deps.db, outbox: deps.outbox, catalog: deps.catalog, stripe: deps.stripe },
          { userId, reference: reference.value },
        );
        return { status: 200, body: confirmed };
      } catch (error) {
        return orThrow(billingErrorAnswer(error), error);
      }
    }),
  );
  return router;
}

function orThrow(answer: RouteAnswer | undefined, error: unknown): RouteAnswer {
  if (answer) return answer;
  throw error;
}
