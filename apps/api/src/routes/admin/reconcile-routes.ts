import {
  BillingError,
  type DB,
  DEFAULT_RECONCILE_WINDOW_DAYS,
  reconcileStripe,
  STRIPE_EVENTS_MAX_WINDOW_DAYS,
  type StripeApi,
} from '@tally/billing-core';
import { sendError } from '@tally/platform';
import { Router } from 'express';
import type { Kysely } from 'kysely';
import { z } from 'zod';
import { parseOr400 } from '../../http/params';

const reconcileBodySchema = z.object({
  windowDays: z.number().positive().max(STRIPE_EVENTS_MAX_WINDOW_DAYS).default(DEFAULT_RECONCILE_WINDOW_DAYS),
  dryRun: z.boolean().default(false),
});

/**
 * POST /admin/reconcile/stripe `{windowDays?, dryRun?}`: compares Stripe's Events API with the
 * inbox over the window, ingests missing events (marked backfill) and reports events processed
 * without their rows and ledger rows without an event (docs/operations.md, "Stripe reconciliation
 * and backfill"). 200 with the
 * report (`ok: false` when anything was found); 503 when STRIPE_SECRET_KEY is not set.
 */
export function createReconcileRoutes(deps: {
  db: Kysely<DB>;
  stripe?: StripeApi | undefined;
  enqueue: (inboxEventIds: number[]) => Promise<unknown>;
}): Router {
  const router = Router();
  router.post('/reconcile/stripe', async (req, res) => {
    const body = parseOr400(res, reconcileBodySchema, req.body ?? {});
    if (body === undefined) return;
    if (!deps.stripe)
      return sendError(res, 503, 'not_configured', 'the Stripe API is not configured (STRIPE_SECRET_KEY)');
    try {
      const report = await reconcileStripe(
        { db: deps.db, stripe: deps.stripe, enqueue: deps.enqueue },
        { windowDays: body.windowDays, dryRun: body.dryRun },
      );
      res.json(report);
    } catch (error) {
      // Stripe unreachable, rate limiting or refusing the list: say so, nothing was half-done
      // (rows already stored are complete inbox rows).
      if (error instanceof BillingError && error.code !== 'invalid_window') {
        return sendError(res, 502, error.code, error.message);
      }
      throw error;
    }
  });
  return router;
}
