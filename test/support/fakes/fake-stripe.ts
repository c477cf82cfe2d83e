import { randomUUID } from 'node:crypto';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createStripeApi, type StripeApi } from '@tally/billing-core';
import { type CardBehaviour, type FakeAnswer, holdAnswer, OffSessionStripe } from './fake-stripe-off-session';
import { ProviderFaults } from './provider-faults';
import { bracketed, type StripeObject } from './stripe-form';

export interface RecordedStripeRequest {
  method: string;
  path: string;
  idempotencyKey: string | null;
  apiVersion: string | null;
  form: Record<string, string>;
}

/** The secret key tests give Tally for the fake (STRIPE_SECRET_KEY); the fake accepts any key. */
export const fakeStripeSecretKey = 'sk_test_fake';

/**
 * A fake of the parts of Stripe's API Tally calls, as a real local HTTP server (the SDK is
 * pointed at it with STRIPE_API_BASE_URL). It stores Subscriptions, PaymentIntents, Checkout
 * Sessions (with line items), InvoicePayments and Events, honours Idempotency-Key on creates like Stripe does (the
 * same key returns the same object), records every request, and can be told to fail. Customers,
 * SetupIntents, saved cards and off-session charges live in fake-stripe-off-session.ts.
 */
export class FakeStripe {
  readonly subscriptions = new Map<string, StripeObject>();
  readonly paymentIntents = new Map<string, StripeObject>();
  readonly checkoutSessions = new Map<string, StripeObject>();
  readonly disputes = new Map<string, StripeObject>();
  /** InvoicePayments (API 2025-03-31+): the only link from a PaymentIntent to the invoice it pays. */
  readonly invoicePayments: StripeObject[] = [];
  readonly events: StripeObject[] = [];
  readonly requests: RecordedStripeRequest[] = [];
  private readonly idempotent = new Map<string, StripeObject>();
  private readonly offSession = new OffSessionStripe(this.paymentIntents, (key) => this.idempotent.has(key));
  readonly customers = this.offSession.customers;
  readonly setupIntents = this.offSession.setupIntents;
  readonly paymentMethods = this.offSession.paymentMethods;
  /** One entry per PaymentIntent created off session (a replayed answer adds none). */
  readonly offSessionCharges = this.offSession.charges;
  private failures: { status: number; headers: Record<string, string>; pathIncludes?: string }[] = [];
  /** Milliseconds the next request waits before it is answered (a slow Stripe, for timeouts). */
  stallNextMs = 0;
  /** One-shot: the next off-session charge is made, then its answer held this long (a timeout after the charge). */
  get stallAfterChargeMs(): number {
    return this.offSession.stallAfterChargeMs;
  }
  set stallAfterChargeMs(ms: number) {
    this.offSession.stallAfterChargeMs = ms;
  }
  /** Fault injection for every request (latency, 5xx, 429 with Retry-After, hangs) until switched off. */
  readonly faults = new ProviderFaults();
  private server!: Server;
  port = 0;

  static async start(): Promise<FakeStripe> {
    const fake = new FakeStripe();
    await fake.listen();
    return fake;
  }

  /** Starts a fake made with `new FakeStripe()` on a free port (what start() does). */
  async listen(): Promise<void> {
    this.server = createServer((req, res) => {
      void this.handle(req, res);
    });
    await new Promise<void>((resolve) => this.server.listen(0, '127.0.0.1', resolve));
    this.port = (this.server.address() as AddressInfo).port;
  }

  get baseUrl(): string {
    return `http://127.0.0.1:${this.port}`;
  }

  /** Tally's Stripe port (the real SDK client) pointed at this fake. */
  api(timeoutMs = 5_000): StripeApi {
    return createStripeApi({ secretKey: fakeStripeSecretKey, apiBaseUrl: this.baseUrl, timeoutMs });
  }

  /** The next matching request(s) fail with this status (429 with Retry-After, 500, …). */
  failNext(status: number, options: { times?: number; headers?: Record<string, string>; pathIncludes?: string } = {}) {
    for (let i = 0; i < (options.times ?? 1); i += 1) {
      this.failures.push({
        status,
        headers: options.headers ?? {},
        ...(options.pathIncludes === undefined ? {} : { pathIncludes: options.pathIncludes }),
      });
    }
  }

  /** Stores (or replaces) a subscription as the API would return it. */
  putSubscription(subscription: StripeObject): void {
    this.subscriptions.set(String(subscription.id), subscription);
  }

  /** Stores (or replaces) a Dispute as `GET /v1/disputes/{id}` returns it. */
  putDispute(dispute: StripeObject): void {
    this.disputes.set(String(dispute.id), dispute);
  }

  putCheckoutSession(session: StripeObject): void {
    this.checkoutSessions.set(String(session.id), session);
  }

  /** Records that a PaymentIntent paid an invoice, as Stripe's InvoicePayment object. */
  putInvoicePayment(options: { invoice: string; paymentIntent: string; amountPaid?: number }): StripeObject {
    const payment: StripeObject = {
      id: `inpay_${randomUUID().replaceAll('-', '').slice(0, 20)}`,
      object: 'invoice_payment',
      amount_paid: options.amountPaid ?? null,
      amount_requested: options.amountPaid ?? 0,
      currency: 'usd',
      invoice: options.invoice,
      is_default: true,
      livemode: false,
      payment: { type: 'payment_intent', payment_intent: options.paymentIntent },
      status: 'paid',
    };
    this.invoicePayments.push(payment);
    return payment;
  }

  /** Moves a PaymentIntent to another status (as a customer paying in the browser would). */
  setPaymentIntentStatus(id: string, status: string): StripeObject {
    const intent = this.paymentIntents.get(id);
    if (!intent) throw new Error(`fake Stripe has no payment intent ${id}`);
    intent.status = status;
    if (status === 'succeeded') intent.amount_received = intent.amount;
    return intent;
  }

  /** Plays the browser confirming a SetupIntent; `outcome` is how the saved card is charged later. */
  completeSetupIntent(setupIntentId: string, outcome: CardBehaviour = 'succeeds'): StripeObject {
    return this.offSession.completeSetupIntent(setupIntentId, outcome);
  }

  setCardBehaviour(paymentMethodId: string, outcome: CardBehaviour): void {
    this.offSession.setCardBehaviour(paymentMethodId, outcome);
  }

  /**
   * Stores an event as the Events API lists it (`created` now unless given); `fake.events` may
   * also be pushed to directly.
   */
  putEvent(event: StripeObject): StripeObject {
    const stored = { created: Math.floor(Date.now() / 1000), ...event };
    this.events.push(stored);
    return stored;
  }

  /**
   * `GET /v1/events` like Stripe: newest first (by `created`, then most recently stored), filtered
   * by `types[]` and `created[gte]`, `limit` per page (default 10, at most 100), cursor
   * `starting_after`, `has_more`.
   */
  private listEvents(form: Record<string, string>): StripeObject {
    const types = Object.entries(form)
      .filter(([key]) => /^types\[\d*\]$/.test(key))
      .map(([, value]) => value);
    const createdGte = form['created[gte]'] === undefined ? undefined : Number(form['created[gte]']);
    const limit = Math.min(Math.max(Number(form.limit ?? 10) || 10, 1), 100);
    const ordered = this.events
      .map((event, index) => ({ event, index }))
      .sort((a, b) => Number(b.event.created ?? 0) - Number(a.event.created ?? 0) || b.index - a.index)
      .map(({ event }) => event)
      .filter((event) => types.length === 0 || types.includes(String(event.type)))
      .filter((event) => createdGte === undefined || Number(event.created ?? 0) >= createdGte);
    let start = 0;
    if (form.starting_after) {
      const at = ordered.findIndex((event) => event.id === form.starting_after);
      start = at < 0 ? ordered.length : at + 1;
    }
    const data = ordered.slice(start, start + limit);
    return { object: 'list', url: '/v1/events', has_more: start + limit < ordered.length, data };
  }

  async stop(): Promise<void> {
    this.faults.releaseAll();
    this.server.closeAllConnections();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }

  private async handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    const url = new URL(req.url ?? '/', 'http://fake');
    const raw = Buffer.concat(chunks).toString('utf8');
    const form = Object.fromEntries(new URLSearchParams(req.method === 'GET' ? url.search : raw));
    const request: RecordedStripeRequest = {
      method: req.method ?? 'GET',
      path: url.pathname,
      idempotencyKey: header(req, 'idempotency-key'),
      apiVersion: header(req, 'stripe-version'),
      form,
    };
    this.requests.push(request);
    if (this.stallNextMs > 0) {
      const stall = this.stallNextMs;
      this.stallNextMs = 0;
      await new Promise((resolve) => setTimeout(resolve, stall));
    }
    const verdict = await this.faults.gate(res);
    if (verdict.kind === 'hung') return;
    if (verdict.kind === 'error') {
      const type = verdict.status === 429 ? 'rate_limit_error' : 'api_error';
      return send(res, verdict.status, { error: { type, message: `fake fault ${verdict.status}` } }, verdict.headers);
    }
    const failureIndex = this.failures.findIndex((f) => !f.pathIncludes || url.pathname.includes(f.pathIncludes));
    if (failureIndex >= 0) {
      const [failure] = this.failures.splice(failureIndex, 1);
      if (failure) {
        const type =
          failure.status === 429 ? 'rate_limit_error' : failure.status >= 500 ? 'api_error' : 'invalid_request_error';
        return send(
          res,
          failure.status,
          { error: { type, message: `fake failure ${failure.status}` } },
          failure.headers,
        );
      }
    }
    const segments = url.pathname.split('/').filter(Boolean);
    const found = (object: StripeObject | undefined, what: string) =>
      object
        ? send(res, 200, object)
        : send(res, 404, {
            error: { type: 'invalid_request_error', code: 'resource_missing', message: `No such ${what}` },
          });

    const offSession = this.offSession.answer(request, segments);
    if (offSession) return this.write(res, offSession);
    if (req.method === 'GET' && segments[1] === 'subscriptions' && segments[2]) {
      return found(this.subscriptions.get(segments[2]), 'subscription');
    }
    if (req.method === 'GET' && segments[1] === 'disputes' && segments[2]) {
      return found(this.disputes.get(segments[2]), 'dispute');
    }
    if (req.method === 'GET' && segments[1] === 'payment_intents' && segments[2]) {
      return found(this.paymentIntents.get(segments[2]), 'payment_intent');
    }
    if (req.method === 'GET' && segments[1] === 'checkout' && segments[2] === 'sessions' && segments[3]) {
      return found(this.checkoutSessions.get(segments[3]), 'checkout.session');
    }
    if (req.method === 'GET' && segments[1] === 'invoice_payments' && segments.length === 2) {
      // Filters by `invoice` and `payment[payment_intent]` (with `payment[type]`), like Stripe.
      const intent = form['payment[payment_intent]'];
      const data = this.invoicePayments.filter(
        (payment) =>
          (form.invoice === undefined || payment.invoice === form.invoice) &&
          (intent === undefined || (payment.payment as StripeObject).payment_intent === intent),
      );
      const limit = Math.min(Math.max(Number(form.limit ?? 10) || 10, 1), 100);
      return send(res, 200, {
        object: 'list',
        url: '/v1/invoice_payments',
        has_more: data.length > limit,
        data: data.slice(0, limit),
      });
    }
    if (req.method === 'GET' && segments[1] === 'events' && segments.length === 2) {
      return send(res, 200, this.listEvents(form));
    }
    if (req.method === 'POST' && segments[1] === 'payment_intents' && segments.length === 2) {
      const key = request.idempotencyKey;
      const conflict = this.offSession.keyConflict(request);
      if (conflict) return this.write(res, conflict);
      const previous = key ? this.idempotent.get(key) : undefined;
      if (previous) return send(res, 200, previous);
      const id = `pi_fake_${randomUUID().replaceAll('-', '')}`;
      const intent: StripeObject = {
        id,
        object: 'payment_intent',
        amount: Number(form.amount),
        amount_received: 0,
        currency: form.currency,
        status: 'requires_payment_method',
        client_secret: `${id}_secret_${randomUUID().slice(0, 8)}`,
        livemode: false,
        metadata: bracketed(form, 'metadata'),
      };
      this.paymentIntents.set(id, intent);
      if (key) this.idempotent.set(key, intent);
      return send(res, 200, intent);
    }
    return send(res, 404, {
      error: { type: 'invalid_request_error', message: `fake Stripe: no route ${url.pathname}` },
    });
  }

  /** Writes an answer after its hold, unless the client gave up waiting meanwhile. */
  private async write(res: ServerResponse, answer: FakeAnswer): Promise<void> {
    if (answer.holdMs) await holdAnswer(res, answer.holdMs);
    if (!res.destroyed) send(res, answer.status, answer.body, answer.headers);
  }
}

function header(req: IncomingMessage, name: string): string | null {
  const value = req.headers[name];
  return typeof value === 'string' ? value : null;
}

function send(res: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}): void {
  res.writeHead(status, {
    'content-type': 'application/json',
    'request-id': `req_${randomUUID().slice(0, 12)}`,
    ...headers,
  });
  res.end(JSON.stringify(body));
}
