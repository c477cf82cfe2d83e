/**
 * Every `BillingError.code`: the only list. HTTP adapters key their status tables by it
 * (`satisfies Record<BillingErrorCode, …>`, so a new code without a status does not compile), and
 * a parked event's outcome code is one of these when outcomes.md lists it (`parkedOutcomeCodeOf`).
 */
export const billingErrorCodes = [
  'insufficient_balance',
  'invalid_event',
  'retry_later',
  'reference_conflict',
  'not_configured',
  'purchase_not_found',
  'stripe_unavailable',
  'stripe_request_failed',
  'stripe_card_error',
  'revenuecat_unavailable',
  'revenuecat_rejected',
  'apple_unavailable',
  'apple_rejected',
  'google_play_unavailable',
  'google_play_rejected',
  'topup_not_found',
  'topup_not_paid',
  'unknown_pack',
  'unknown_user',
  'idempotency_key_in_use',
  'ai_unreachable',
  'ai_timeout',
  'ai_failed',
  'invalid_request',
  'invalid_window',
] as const;
export type BillingErrorCode = (typeof billingErrorCodes)[number];

/**
 * Failures that callers must tell apart carry a stable `code` and a `retryable` flag. The worker
 * turns non-retryable errors into parked events at once; HTTP adapters map codes to statuses.
 */
export class BillingError extends Error {
  readonly code: BillingErrorCode;
  readonly retryable: boolean;
  constructor(code: BillingErrorCode, message: string, options: { retryable: boolean; cause?: unknown }) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.name = new.target.name;
    this.code = code;
    this.retryable = options.retryable;
  }
}

/**
 * A debit asked for more tokens than the wallet can spend. `available` is what it could have had:
 * the tokens neither held nor (for a spend) in an expired lot; `balance` the figure the message
 * names (the same, unless a caller says otherwise).
 */
export class InsufficientBalanceError extends BillingError {
  readonly available: number;
  constructor(
    readonly userId: string,
    readonly balance: number,
    readonly requested: number,
    available?: number,
  ) {
    super('insufficient_balance', `wallet ${userId} holds ${balance} tokens, ${requested} requested`, {
      retryable: false,
    });
    this.available = available ?? balance;
  }
}

/** An event that can never be processed as it stands (bad shape, unknown product, mismatch). */
export class InvalidEventError extends BillingError {
  constructor(message: string) {
    super('invalid_event', message, { retryable: false });
  }
}

/** Whether an error should be retried: BillingErrors say so; anything unknown is retried. */
export function isRetryable(error: unknown): boolean {
  return error instanceof BillingError ? error.retryable : true;
}

/**
 * The event cannot be applied yet because something it depends on has not arrived (an
 * `invoice.paid` before its subscription), or a provider asked us to slow down (429
 * `Retry-After`). The engine delays the event without spending its failure budget, logs no
 * error, and parks it only after the configured maximum wait.
 */
export class RetryLaterError extends BillingError {
  /** How long to wait before the next attempt; the engine picks a growing delay when absent. */
  readonly delayMs: number | undefined;
  constructor(reason: string, options: { delayMs?: number | undefined; cause?: unknown } = {}) {
    super('retry_later', reason, { retryable: true, cause: options.cause });
    this.delayMs = options.delayMs;
  }
}

/**
 * A ledger reference already exists with a different user or amount. References are
 * deterministic, so this means two code paths disagree about one grant: a bug or a forged event,
 * never something a retry fixes. The event parks and an alert fires.
 */
export class LedgerReferenceConflictError extends BillingError {
  constructor(
    readonly reference: string,
    readonly existing: { userId: string; amount: number },
    readonly attempted: { userId: string; amount: number },
  ) {
    super(
      'reference_conflict',
      `ledger reference ${reference} already posts ${existing.amount} to ${existing.userId}; refusing ${attempted.amount} to ${attempted.userId}`,
      { retryable: false },
    );
  }
}

/** A port the event needs (a provider API, the mailer) is not configured in this deployment. */
export class NotConfiguredError extends BillingError {
  constructor(what: string) {
    super('not_configured', `${what} is not configured`, { retryable: false });
  }
}

/** The longest error text a row keeps (`last_error` and the like); toErrorText truncates to it. */
export const ERROR_TEXT_MAX_LENGTH = 2_000;

/** Truncated, single-line error text for a row; never includes a stack. */
export function toErrorText(error: unknown): string {
  const raw = error instanceof Error ? `${error.name}: ${error.message}` : String(error);
  // Postgres text cannot hold NUL, and control characters break log lines: an error quoting a
  // hostile id must still be recordable, or the failure itself could not be written.
  // biome-ignore lint/suspicious/noControlCharactersInRegex: stripping them is the point
  const text = raw.replace(/[\u0000-\u0008\u000b-\u001f\u007f]/g, '\ufffd');
  return text.length > ERROR_TEXT_MAX_LENGTH ? `${text.slice(0, ERROR_TEXT_MAX_LENGTH - 1)}…` : text;
}

/**
 * RevenueCat never listed a token pack purchase the event claims (checked against its REST read
 * for an hour): a forged body, or a purchase RevenueCat does not know. Parks the event.
 */
export class PurchaseNotFoundError extends BillingError {
  constructor(message: string) {
    super('purchase_not_found', message, { retryable: false });
  }
}
