import {
  adminActions,
  BillingError,
  DEFAULT_RECONCILE_WINDOW_DAYS,
  reconcileStripe,
  STRIPE_EVENTS_MAX_WINDOW_DAYS,
} from '@tally/billing-core';
import { z } from 'zod';
import { errorAnswer } from '../../http/answer';
import { defineRoute } from '../../http/define-route';
import { answerDoc, errorDoc } from '../../http/route-doc';

const reconcileBodySchema = z.strictObject({
  windowDays: z.number().positive().max(STRIPE_EVENTS_MAX_WINDOW_DAYS).default(DEFAULT_RECONCILE_WINDOW_DAYS),
  dryRun: z.boolean().default(false),
});

const reportSchema = z.strictObject({
  ok: z.boolean(),
  dryRun: z.boolean(),
  windowDays: z.number(),
  windowStart: z.iso.datetime(),
  stripeEvents: z.number().int(),
  truncated: z.boolean(),
  missingEvents: z.array(
    z.strictObject({
      eventId: z.string(),
      type: z.string(),
      createdAt: z.iso.datetime().nullable(),
      result: z.enum(['ingested', 'duplicate', 'would_ingest', 'failed']),
      inboxEventId: z.number().int().nullable(),
    }),
  ),
  eventsWithoutRows: z.array(
    z.strictObject({
      inboxEventId: z.number().int(),
      eventId: z.string(),
      type: z.string(),
      outcomeCode: z.string().nullable(),
      missing: z.array(z.string()),
    }),
  ),
  ledgerRowsWithoutEvent: z.array(
    z.strictObject({
      ledgerEntryId: z.number().int(),
      reference: z.string(),
      userId: z.string(),
      amount: z.number().int(),
      createdAt: z.iso.datetime(),
    }),
  ),
});

/**
 * POST /admin/reconcile/stripe `{windowDays?, dryRun?}`: compares Stripe's Events API with the
 * inbox over the window, ingests missing events (marked backfill) and reports events processed
 * without their rows and ledger rows without an event (docs/operations.md, "Stripe reconciliation
 * and backfill"). 200 with the report (`ok: false` when anything was found); 503 when
 * STRIPE_SECRET_KEY is not set. It spans calls to Stripe, so its audit row is written before it runs.
 */
export const reconcileRoutes = [
  defineRoute({
    method: 'post',
    path: '/admin/reconcile/stripe',
    summary: "Compare Stripe's Events API with the inbox and backfill what is missing",
    body: reconcileBodySchema,
    audit: { action: adminActions.reconcileStripe },
    answers: {
      200: answerDoc('the report (`ok: false` when anything was found)', reportSchema),
      400: errorDoc('a bad body', ['invalid_request']),
      502: errorDoc('Stripe unreachable, rate limiting or refusing the list', [
        'stripe_unavailable',
        'stripe_request_failed',
        'retry_later',
      ]),
      503: errorDoc('STRIPE_SECRET_KEY is not set', ['not_configured']),
    },
    handler: async ({ body }, { db, stripe, enqueue }) => {
      if (!stripe) return errorAnswer(503, 'not_configured', 'the Stripe API is not configured (STRIPE_SECRET_KEY)');
      try {
        const report = await reconcileStripe(
          { db, stripe, enqueue },
          { windowDays: body.windowDays, dryRun: body.dryRun },
        );
        return { status: 200, body: report satisfies z.input<typeof reportSchema> };
      } catch (error) {
        // Stripe unreachable, rate limiting or refusing the list: say so, nothing was half-done
        // (rows already stored are complete inbox rows).
        if (error instanceof BillingError && error.code !== 'invalid_window') {
          return errorAnswer(502, error.code, error.message);
        }
        throw error;
      }
    },
  }),
];
