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
import { sendError } from '@tally/platform';
import { type Response, Router } from 'express';
import type { Kysely } from 'kysely';
import { z } from 'zod';
import { httpStatusByBillingErrorCode } from '../../http/billing-error-statuses';
import { idempotentPostOf, markAnswerRetryable } from '../../http/idempotency';
import { parseOr400 } from '../../http/params';
import { userScopeOf } from '../../http/user-scope';

const createSchema = z.object({ packId: z.string().min(1).max(255) });
const referenceSchema = z.string().regex(/^tu_[A-Za-z0-9]{8,64}$/);

function sendBillingError(res: Response, error: unknown): boolean {
  // Another attempt runs this request's Idempotency-Key now: idempotencyErrorHandler answers 409.
  if (!(error instanceof BillingError) || error instanceof IdempotencyLeaseLostError) return false;
  const status: number = httpStatusByBillingErrorCode[error.code];
  // A retry may get another answer (409 topup_not_paid until the intent succeeded): not final.
  if (error.retryable) markAnswerRetryable(res);
  if (error instanceof RetryLaterError && error.delayMs !== undefined) {
    res.setHeader('retry-after', String(Math.ceil(error.delayMs / 1000)));
  }
  if (error instanceof TopupNotPaidError) {
    res
      .status(status)
      .json({ error: { code: error.code, message: error.message }, paymentStatus: error.paymentStatus });
    return true;
  }
  sendError(res, status, error.code, status >= 500 ? 'the payment provider is unavailable' : error.message);
  return true;
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
}): Router {
  const router = Router();
  router.post('/topups', async (req, res) => {
    const { userId } = userScopeOf(res);
    const body = parseOr400(res, createSchema, req.body ?? {});
    if (body === undefined) return;
    if (!deps.catalog) return sendError(res, 503, 'not_configured', 'top-ups are not configured');
    try {
      const topup = await createTopup(
        { db: deps.db, catalog: deps.catalog, stripe: deps.stripe },
        { userId, packId: body.packId },
        idempotentPostOf(res)?.bind(toStartedAnswer),
      );
      const answer = toStartedAnswer(topup);
      res.status(answer.status).json(answer.body);
    } catch (error) {
      if (!sendBillingError(res, error)) throw error;
    }
  });
  router.post('/topups/:reference/confirm', async (req, res) => {
    const { userId } = userScopeOf(res);
    const reference = parseOr400(res, referenceSchema, req.params.reference);
    if (reference === undefined) return;
    if (!deps.catalog) return sendError(res, 503, 'not_configured', 'top-ups are not configured');
    try {
      res.json(
        await confirmTopup(
          { db: deps.db, outbox: deps.outbox, catalog: deps.catalog, stripe: deps.stripe },
          { userId, reference },
        ),
      );
    } catch (error) {
      if (!sendBillingError(res, error)) throw error;
    }
  });
  return router;
}
