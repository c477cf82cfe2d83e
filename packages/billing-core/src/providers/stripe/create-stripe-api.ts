import Stripe from 'stripe';
import { BillingError, RetryLaterError } from '../../errors';
import { type StripeApi, StripeCardError } from '../../ports/stripe-api';

/**
 * The one place the Stripe API version is pinned. Webhook payloads arrive in the endpoint's own
 * version (set in the Stripe dashboard); parsers read both the current and pre-2025-03-31 shapes.
 */
export const STRIPE_API_VERSION = '2026-10-28.endive' as const;

export interface StripeApiSettings {
  secretKey: string;
  /** Overrides `https://api.stripe.com` (a local fake in tests): scheme, host and port are used. */
  apiBaseUrl?: string | undefined;
  timeoutMs: number;
}

/** A Stripe call that failed in a way a later attempt may not (5xx, timeout, network). */
export class StripeUnavailableError extends BillingError {
  constructor(message: string, cause: unknown) {
    super('stripe_unavailable', message, { retryable: true, cause });
  }
}

/** Stripe refused the request itself (4xx other than 429): retrying the same call will not help. */
export class StripeRequestError extends BillingError {
  constructor(
    message: string,
    readonly statusCode: number | undefined,
    cause: unknown,
  ) {
    super('stripe_request_failed', message, { retryable: false, cause });
  }
}

/** Splits STRIPE_API_BASE_URL into the SDK's host/port/protocol options. */
export function toStripeHostOptions(apiBaseUrl: string | undefined): {
  host?: string;
  port?: number;
  protocol?: 'http' | 'https';
} {
  if (!apiBaseUrl) return {};
  const url = new URL(apiBaseUrl);
  const protocol = url.protocol === 'http:' ? 'http' : 'https';
  return {
    host: url.hostname,
    port: url.port ? Number(url.port) : protocol === 'http' ? 80 : 443,
    protocol,
  };
}

/**
 * The StripeApi port over the official SDK: pinned API version, a request timeout, no SDK-level
 * retries (the inbox engine owns retries and their budget), an idempotency key on every create.
 */
export function createStripeApi(settings: StripeApiSettings): StripeApi {
  const stripe = new Stripe(settings.secretKey, {
    apiVersion: STRIPE_API_VERSION,
    timeout: settings.timeoutMs,
    maxNetworkRetries: 0,
    telemetry: false,
    ...toStripeHostOptions(settings.apiBaseUrl),
  });
  /** One PaymentIntent create: the amount, currency, metadata and description, and what the kind adds. */
  const createIntent = (
    params: { amountMinor: number; currency: string; metadata: Record<string, string>; description?: string },
    kind: Omit<Stripe.PaymentIntentCreateParams, 'amount' | 'currency' | 'metadata' | 'description'>,
    idempotencyKey: string,
  ) =>
    stripe.paymentIntents.create(
      {
        amount: params.amountMinor,
        currency: params.currency,
        metadata: params.metadata,
        ...(params.description === undefined ? {} : { description: params.description }),
        ...kind,
      },
      { idempotencyKey },
    );
  const call = async <T>(what: string, run: () => Promise<T>): Promise<Record<string, unknown>> => {
    try {
      return (await run()) as unknown as Record<string, unknown>;
    } catch (error) {
      throw toBillingError(what, error);
    }
  };
  return {
    retrieveSubscription: (id) => call(`retrieve subscription ${id}`, () => stripe.subscriptions.retrieve(id)),
    retrievePaymentIntent: (id) => call(`retrieve payment intent ${id}`, () => stripe.paymentIntents.retrieve(id)),
    retrieveDispute: (id) => call(`retrieve dispute ${id}`, () => stripe.disputes.retrieve(id)),
    retrieveCheckoutSession: (id) =>
      call(`retrieve checkout session ${id}`, () => stripe.checkout.sessions.retrieve(id, { expand: ['line_items'] })),
    // A top-up the browser pays: the methods the Dashboard enables, confirmed by Stripe.js.
    createPaymentIntent: (params, options) =>
      call('create payment intent', () =>
        createIntent(params, { automatic_payment_methods: { enabled: true } }, options.idempotencyKey),
      ),
    createCustomer: (params, options) =>
      call('create customer', () =>
        stripe.customers.create(
          { metadata: { user_id: params.userId }, ...(params.email === undefined ? {} : { email: params.email }) },
          { idempotencyKey: options.idempotencyKey },
        ),
      ),
    createSetupIntent: (params, options) =>
      call('create setup intent', () =>
        stripe.setupIntents.create(
          {
            customer: params.customerId,
            usage: 'off_session',
            metadata: { user_id: params.userId },
            automatic_payment_methods: { enabled: true },
          },
          { idempotencyKey: options.idempotencyKey },
        ),
      ),
    // Auto top-up: the saved card, charged and confirmed now, without the customer.
    chargeOffSession: (params, options) =>
      call('charge off session', () =>
        createIntent(
          params,
          { customer: params.customerId, payment_method: params.paymentMethodId, off_session: true, confirm: true },
          options.idempotencyKey,
        ),
      ),
    async findInvoiceOfPaymentIntent(paymentIntentId) {
      try {
        const page = await stripe.invoicePayments.list({
          payment: { type: 'payment_intent', payment_intent: paymentIntentId },
          limit: 1,
        });
        const invoice = page.data[0]?.invoice;
        if (invoice === undefined) return null;
        return typeof invoice === 'string' ? invoice : invoice.id;
      } catch (error) {
        throw toBillingError(`find the invoice of payment intent ${paymentIntentId}`, error);
      }
    },
    async listEvents(params) {
      try {
        const page = await stripe.events.list({
          limit: params.limit ?? 100,
          ...(params.types ? { types: params.types } : {}),
          ...(params.createdGte === undefined ? {} : { created: { gte: params.createdGte } }),
          ...(params.startingAfter === undefined ? {} : { starting_after: params.startingAfter }),
        });
        return { data: page.data as unknown as Record<string, unknown>[], hasMore: page.has_more };
      } catch (error) {
        throw toBillingError('list events', error);
      }
    },
  };
}

function toBillingError(what: string, error: unknown): Error {
  if (error instanceof Stripe.errors.StripeError) {
    const status = error.statusCode;
    if (status === 429 || error.type === 'StripeRateLimitError') {
      const retryAfter = Number(error.headers?.['retry-after']);
      return new RetryLaterError(`Stripe rate limit on ${what}`, {
        delayMs: Number.isFinite(retryAfter) && retryAfter > 0 ? retryAfter * 1000 : undefined,
        cause: error,
      });
    }
    if (error instanceof Stripe.errors.StripeCardError || error.type === 'StripeCardError') {
      return new StripeCardError(
        `Stripe refused ${what}: ${error.code ?? 'card_error'}${error.decline_code ? ` (${error.decline_code})` : ''}`,
        error.code ?? 'card_error',
        error.decline_code ?? null,
        (error.payment_intent as unknown as Record<string, unknown> | undefined) ?? null,
        error,
      );
    }
    if (status !== undefined && status >= 400 && status < 500) {
      return new StripeRequestError(`Stripe refused ${what} (${status}): ${error.message}`, status, error);
    }
    return new StripeUnavailableError(`Stripe ${what} failed${status ? ` (${status})` : ''}: ${error.message}`, error);
  }
  return new StripeUnavailableError(`Stripe ${what} failed: ${(error as Error).message ?? String(error)}`, error);
}
