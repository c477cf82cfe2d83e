import { BillingError } from '../errors';

/**
 * A charge the card's bank refused (Stripe's `card_error`, HTTP 402): a decline, or
 * `authentication_required` for an off-session charge the bank wants the customer for. Stripe
 * keeps the PaymentIntent (`requires_payment_method`): its client secret lets the app bring the
 * customer back on session. Not retryable: the same call gets the same answer.
 */
export class StripeCardError extends BillingError {
  constructor(
    message: string,
    /** Stripe's error code (`card_declined`, `authentication_required`, `expired_card`, …). */
    readonly stripeCode: string,
    /** The bank's reason (`insufficient_funds`, …), when Stripe gives one. */
    readonly declineCode: string | null,
    /** The PaymentIntent the failed charge left, when Stripe returned it. */
    readonly paymentIntent: Record<string, unknown> | null,
    cause: unknown,
  ) {
    super('stripe_card_error', message, { retryable: false, cause });
  }
}

/**
 * The Stripe API reads and writes Tally makes, behind a port so handlers never build a client.
 * Objects are Stripe's own JSON shapes (the flows narrow them with their own parsers). Every
 * create carries an idempotency key. Implementations throw RetryLaterError on 429 (with the
 * Retry-After delay when Stripe sends one) and a retryable error on 5xx, timeouts and network
 * failures.
 */
export interface StripeApi {
  retrieveSubscription(subscriptionId: string): Promise<Record<string, unknown>>;
  retrievePaymentIntent(paymentIntentId: string): Promise<Record<string, unknown>>;
  /**
   * A Dispute (`GET /v1/disputes/{id}`): its `status`, `payment_intent`, `charge` and the
   * `balance_transactions` that show the funds withdrawn (negative) and reinstated (positive).
   */
  retrieveDispute(disputeId: string): Promise<Record<string, unknown>>;
  /** A Checkout Session with `line_items` expanded (webhooks never carry them). */
  retrieveCheckoutSession(sessionId: string): Promise<Record<string, unknown>>;
  /** Creates a PaymentIntent; the same idempotency key returns the same intent. */
  createPaymentIntent(
    params: { amountMinor: number; currency: string; metadata: Record<string, string>; description?: string },
    options: { idempotencyKey: string },
  ): Promise<Record<string, unknown>>;
  /** Creates a Customer for a user (`metadata.user_id`); the same idempotency key returns the same customer. */
  createCustomer(
    params: { userId: string; email?: string | undefined },
    options: { idempotencyKey: string },
  ): Promise<Record<string, unknown>>;
  /** Creates a SetupIntent for off-session use of the customer's next payment method (`metadata.user_id`). */
  createSetupIntent(
    params: { customerId: string; userId: string },
    options: { idempotencyKey: string },
  ): Promise<Record<string, unknown>>;
  /**
   * Charges a saved payment method without the customer (`confirm: true, off_session: true`).
   * The same idempotency key replays Stripe's first answer, a decline included, and never charges
   * twice. A decline or a bank asking for the customer throws StripeCardError (with the intent).
   */
  chargeOffSession(
    params: {
      amountMinor: number;
      currency: string;
      customerId: string;
      paymentMethodId: string;
      metadata: Record<string, string>;
      description: string;
    },
    options: { idempotencyKey: string },
  ): Promise<Record<string, unknown>>;
  /**
   * The invoice a PaymentIntent pays (`GET /v1/invoice_payments?payment[payment_intent]=…`), or
   * null when it pays none. Since API 2025-03-31 neither a Charge nor a PaymentIntent names its
   * invoice; an InvoicePayment links them.
   */
  findInvoiceOfPaymentIntent(paymentIntentId: string): Promise<string | null>;
  /** One page of `GET /v1/events` (last 30 days), newest first. */
  listEvents(params: {
    types?: string[];
    createdGte?: number;
    startingAfter?: string;
    limit?: number;
  }): Promise<{ data: Record<string, unknown>[]; hasMore: boolean }>;
}
