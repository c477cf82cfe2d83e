import type { BillingErrorCode } from '@tally/billing-core';

/**
 * The one table from billing error codes to HTTP statuses, for every route that answers a
 * BillingError. Keyed by every code: a code added to billing-core without a status here is a
 * compile error. Codes no route can meet today (the worker's) still get the status they would mean.
 */
export const httpStatusByBillingErrorCode = {
  insufficient_balance: 402,
  invalid_event: 409,
  retry_later: 503,
  // Two code paths disagree about one grant: a bug, never the caller's fault.
  reference_conflict: 500,
  not_configured: 503,
  purchase_not_found: 502,
  stripe_unavailable: 502,
  stripe_request_failed: 502,
  // A card refused off session (auto top-up's worker): the customer's bank said no.
  stripe_card_error: 402,
  revenuecat_unavailable: 502,
  revenuecat_rejected: 502,
  apple_unavailable: 502,
  apple_rejected: 502,
  google_play_unavailable: 502,
  google_play_rejected: 502,
  topup_not_found: 404,
  topup_not_paid: 409,
  unknown_pack: 400,
  // guard: billing-error-unknown-user
  unknown_user: 404,
  idempotency_key_in_use: 409,
  ai_unreachable: 502,
  ai_timeout: 504,
  ai_failed: 502,
  invalid_request: 400,
  invalid_window: 400,
} as const satisfies Record<BillingErrorCode, number>;
