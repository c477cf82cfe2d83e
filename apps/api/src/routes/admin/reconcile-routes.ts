import {
  APPLE_RECONCILE_MAX_WINDOW_DAYS,
  adminActions,
  BillingError,
  DEFAULT_APPLE_RECONCILE_WINDOW_DAYS,
  DEFAULT_RECONCILE_WINDOW_DAYS,
  paymentEnvironments,
  reconcileApple,
  reconcileStripe,
  STRIPE_EVENTS_MAX_WINDOW_DAYS,
} from '@tally/billing-core';
import { z } from 'zod';
import { errorAnswer } from '../../http/answer';
import { defineRoute } from '../../http/define-route';
import { answerDoc, errorDoc } from '../../http/route-doc';

/** `{windowDays?, dryRun?}` of a reconciliation: the window within what the provider keeps. */
const reconcileBodySchema = (window: { maxDays: number; defaultDays: number }) =>
  z.strictObject({
    windowDays: z.number().positive().max(window.maxDays).default(window.defaultDays),
    dryRun: z.boolean().default(false),
  });

const backfillResultSchema = z.enum(['ingested', 'duplicate', 'would_ingest', 'failed']);

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
      result: backfillResultSchema,
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

const environmentSchema = z.enum(paymentEnvironments);
const appleReportSchema = z.strictObject({
  ok: z.boolean(),
  dryRun: z.boolean(),
  windowDays: z.number(),
  windowStart: z.iso.datetime(),
  environments: z.array(environmentSchema),
  truncated: z.boolean(),
  seen: z.number().int(),
  alreadyStored: z.number().int(),
  recorded: z.number().int(),
  refused: z.number().int(),
  missingNotifications: z.array(
    z.strictObject({
      notificationUUID: z.string(),
      type: z.string(),
      environment: environmentSchema,
      signedDate: z.iso.datetime().nullable(),
      result: backfillResultSchema,
      inboxEventId: z.number().int().nullable(),
    }),
  ),
  refusedNotifications: z.array(
    z.strictObject({
      listedBy: environmentSchema,
      code: z.enum(['invalid_event', 'invalid_signature', 'wrong_app']),
      reason: z.string(),
    }),
  ),
});

/** A provider failing during a run (unreachable, rate limiting, refusing): 502 with its code. */
function providerFailure(error: unknown) {
  // Nothing was half-done: rows already stored are complete inbox rows.
  if (error instanceof BillingError && error.code !== 'invalid_window' && error.code !== 'not_configured') {
    return errorAnswer(502, error.code, error.message);
  }
  throw error;
}

/**
 * The reconciliation routes. POST /admin/reconcile/stripe `{windowDays?, dryRun?}`: compares Stripe's Events API with the
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
    body: reconcileBodySchema({ maxDays: STRIPE_EVENTS_MAX_WINDOW_DAYS, defaultDays: DEFAULT_RECONCILE_WINDOW_DAYS }),
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
        return providerFailure(error);
      }
    },
  }),
  /**
   * POST /admin/reconcile/apple `{windowDays?, dryRun?}`: reads Apple's notification history over
   * the window, verifies each notification as ingest does and records the ones the inbox lacks
   * (docs/stores-apple.md, "Reconciliation"). 200 with the report (`ok: false` when something was
   * missing or refused); 503 without the App Store Server API or the notification check. Audited
   * before it runs, as Stripe's.
   */
  defineRoute({
    method: 'post',
    path: '/admin/reconcile/apple',
    summary: "Compare Apple's notification history with the inbox and record what is missing",
    body: reconcileBodySchema({
      maxDays: APPLE_RECONCILE_MAX_WINDOW_DAYS,
      defaultDays: DEFAULT_APPLE_RECONCILE_WINDOW_DAYS,
    }),
    audit: { action: adminActions.reconcileApple },
    answers: {
      200: answerDoc(
        'the report (`ok: false` when a notification was missing or failed verification)',
        appleReportSchema,
      ),
      400: errorDoc('a bad body', ['invalid_request']),
      502: errorDoc('Apple unreachable, rate limiting or refusing the request', [
        'apple_unavailable',
        'apple_rejected',
        'retry_later',
      ]),
      503: errorDoc('the App Store Server API or the notification check (APPLE_*) is not set', ['not_configured']),
    },
    handler: async ({ body }, { db, appleReconcile, enqueue }) => {
      if (!appleReconcile) {
        return errorAnswer(
          503,
          'not_configured',
          'Apple reconciliation is not configured (APPLE_KEY_ID, APPLE_ISSUER_ID, APPLE_PRIVATE_KEY_PATH, APPLE_ROOT_CERTIFICATES, APPLE_BUNDLE_ID, APPLE_APP_APPLE_ID)',
        );
      }
      try {
        const report = await reconcileApple(
          { db, enqueue, apple: appleReconcile },
          { windowDays: body.windowDays, dryRun: body.dryRun },
        );
        return { status: 200, body: report satisfies z.input<typeof appleReportSchema> };
      } catch (error) {
        return providerFailure(error);
      }
    },
  }),
];
