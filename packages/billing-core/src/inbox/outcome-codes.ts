import { BillingError } from '../errors';

/**
 * Every outcome code the engine and the handlers write to `inbox_events.outcome_code`, by the
 * status it goes with. This is the only list: handlers can only return a member (HandlerResult
 * is typed on these unions), and a unit test checks docs/outcomes.md against it both ways.
 * Codes are added, never renamed without a migration that rewrites the stored rows (0026 merged
 * RevenueCat's `refunded_partially` into `partially_refunded`).
 */
export const outcomeCodes = {
  processed: [
    'credited',
    'already_credited',
    'refunded',
    'partially_refunded',
    'already_refunded',
    'subscription_synced',
    'already_synchronized',
    'customer_remembered',
    'dispute_funds_withdrawn',
    'dispute_funds_reinstated',
    'dispute_already_applied',
    'payment_method_saved',
    'refund_reversed',
    'consumption_request_recorded',
  ],
  ignored: [
    'test_event',
    'unhandled_type',
    'not_in_catalog',
    'not_a_token_pack',
    'other_environment',
    'unknown_environment',
    'connect_account',
    'stale_read',
    'awaiting_payment',
    'not_a_subscription_invoice',
    'invoice_not_paid',
    'unknown_price',
    'unknown_payment',
    'nothing_refunded',
    'no_user',
    'transaction_already_credited',
    'dispute_no_funds_movement',
    'setup_not_off_session',
    'unknown_account_token',
    'refund_declined',
    'purchase_canceled',
    'purchase_voided',
  ],
  /** Written by the engine on an unfinished row. */
  received: ['waiting', 'retrying'],
  /** Written by the engine on a parked row: its own, or the code of the non-retryable error. */
  failed: [
    'attempts_exhausted',
    'waited_too_long',
    'invalid_event',
    'reference_conflict',
    'not_configured',
    'insufficient_balance',
    'stripe_request_failed',
    'revenuecat_rejected',
    'apple_rejected',
    'purchase_not_found',
    'google_play_rejected',
    'non_retryable_error',
  ],
} as const;

/**
 * Codes that earlier builds wrote and rows may still carry (filter and replay by them); nothing
 * writes them any more.
 */
export const legacyOutcomeCodes = [
  'processed',
  'ignored',
  'failed',
  'awaiting_subscription_sync',
  'partial_refund',
  'subscription_refund',
] as const;

export type ProcessedOutcomeCode = (typeof outcomeCodes.processed)[number];
export type IgnoredOutcomeCode = (typeof outcomeCodes.ignored)[number];
export type ReceivedOutcomeCode = (typeof outcomeCodes.received)[number];
export type ParkedOutcomeCode = (typeof outcomeCodes.failed)[number];
/** A stable, machine-readable outcome code (lowercase snake case; the database checks the shape). */
export type OutcomeCode = ProcessedOutcomeCode | IgnoredOutcomeCode | ReceivedOutcomeCode | ParkedOutcomeCode;
export type LegacyOutcomeCode = (typeof legacyOutcomeCodes)[number];

const parkedCodes: ReadonlySet<string> = new Set(outcomeCodes.failed);

/**
 * The code a row parks under when `error` is not retryable: the BillingError's own code when it is
 * one of the parked codes above, else `non_retryable_error` (last_error says what it was).
 */
export function parkedOutcomeCodeOf(error: unknown): ParkedOutcomeCode {
  return error instanceof BillingError && parkedCodes.has(error.code)
    ? (error.code as ParkedOutcomeCode)
    : 'non_retryable_error';
}
