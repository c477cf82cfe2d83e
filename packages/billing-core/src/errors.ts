/**
 * Failures that callers must tell apart carry a stable `code` and a `retryable` flag. The worker
 * turns non-retryable errors into parked events at once; HTTP adapters map codes to statuses.
 */
export class BillingError extends Error {
  readonly code: string;
  readonly retryable: boolean;
  constructor(code: string, message: string, options: { retryable: boolean; cause?: unknown }) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.name = new.target.name;
    this.code = code;
    this.retryable = options.retryable;
  }
}

/** A debit asked for more tokens than the wallet holds. */
export class InsufficientBalanceError extends BillingError {
  constructor(
    readonly userId: string,
    readonly balance: number,
    readonly requested: number,
  ) {
    super('insufficient_balance', `wallet ${userId} holds ${balance} tokens, ${requested} requested`, {
      retryable: false,
    });
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
