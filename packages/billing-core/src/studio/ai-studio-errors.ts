import { BillingError } from '../errors';

/**
 * The AI service could not be reached and the request was never sent (connection refused, DNS
 * failure, connect timeout). The only AI failure that is safe to retry: the service cannot have
 * started (or billed for) a generation it never received.
 */
export class AiStudioUnreachableError extends BillingError {
  constructor(message: string, options: { cause?: unknown } = {}) {
    super('ai_unreachable', message, { retryable: true, cause: options.cause });
  }
}

/**
 * The AI service did not answer within AI_STUDIO_TIMEOUT_MS. The request may be running on the
 * service: not retried (a second call could run a second generation); the request fails and is
 * refunded.
 */
export class AiStudioTimeoutError extends BillingError {
  constructor(timeoutMs: number, options: { cause?: unknown } = {}) {
    super('ai_timeout', `the AI service did not answer within ${timeoutMs} ms`, {
      retryable: false,
      cause: options.cause,
    });
  }
}

/** The AI service answered with something other than a 2xx JSON body, or the connection broke mid-call. */
export class AiStudioFailedError extends BillingError {
  constructor(
    message: string,
    readonly status: number | undefined,
    options: { cause?: unknown } = {},
  ) {
    super('ai_failed', message, { retryable: false, cause: options.cause });
  }
}
