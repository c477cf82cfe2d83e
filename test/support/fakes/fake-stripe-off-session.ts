import type { ServerResponse } from 'node:http';
import { bracketed, fakeId, type StripeObject } from './stripe-form';

/**
 * How a saved card behaves when charged off session, like Stripe's test cards: 4242… succeeds,
 * …9995 is declined for insufficient funds, …3184 always asks for authentication (which an
 * off-session charge cannot give), and `processing` is a charge that settles later.
 */
export type CardBehaviour = 'succeeds' | 'declines' | 'requires_authentication' | 'processing';

/** One PaymentIntent actually created off session (a replayed answer adds none). */
export interface OffSessionCharge {
  paymentIntent: string;
  customer: string;
  paymentMethod: string;
  amount: number;
  currency: string;
  outcome: CardBehaviour;
  idempotencyKey: string | null;
}

/** An answer the fake writes: `holdMs` holds it that long first (the client may give up meanwhile). */
export interface FakeAnswer {
  status: number;
  body: StripeObject;
  headers?: Record<string, string>;
  holdMs?: number;
}

/** The parts of a request the routes here read. */
export interface FakeRequest {
  method: string;
  path: string;
  idempotencyKey: string | null;
  form: Record<string, string>;
}

/** The first answer given under an Idempotency-Key, with what was asked (to spot a reuse). */
interface SavedAnswer {
  path: string;
  form: string;
  status: number;
  body: StripeObject;
}

const intentStatus: Record<CardBehaviour, string> = {
  succeeds: 'succeeded',
  processing: 'processing',
  declines: 'requires_payment_method',
  requires_authentication: 'requires_payment_method',
};

/** The card_error an off-session charge of a failing card gets, as Stripe words it. */
const cardErrors: Partial<Record<CardBehaviour, { code: string; decline_code: string; message: string }>> = {
  declines: { code: 'card_declined', decline_code: 'insufficient_funds', message: 'Your card has insufficient funds.' },
  requires_authentication: {
    code: 'authentication_required',
    decline_code: 'authentication_required',
    message: 'Your card was declined. This transaction requires authentication.',
  },
};

/**
 * The fake Stripe's Customers, SetupIntents, saved PaymentMethods and off-session PaymentIntents
 * (auto top-up saves a card once, then a worker charges it with `confirm` and `off_session`).
 * Idempotency here is Stripe's own: the first answer under a key (402s included) is saved and
 * replayed byte for byte without acting again, and the key reused with other parameters or on
 * another endpoint is refused with an idempotency_error. A request refused by validation (400:
 * an unknown customer or payment method) saves nothing, as Stripe saves only answers of
 * requests that began executing.
 */
export class OffSessionStripe {
  readonly customers = new Map<string, StripeObject>();
  readonly setupIntents = new Map<string, StripeObject>();
  readonly paymentMethods = new Map<string, StripeObject>();
  readonly charges: OffSessionCharge[] = [];
  /** One-shot: the next off-session charge is made and stored, then its answer is held this many ms. */
  stallAfterChargeMs = 0;
  private readonly behaviours = new Map<string, CardBehaviour>();
  private readonly saved = new Map<string, SavedAnswer>();

  constructor(
    private readonly paymentIntents: Map<string, StripeObject>,
    /** Whether the plain PaymentIntent create (which keeps its own key record) used this key. */
    private readonly usedByPlainCreate: (key: string) => boolean,
  ) {}

  /** Answers the routes this part of the fake owns; undefined for every other request. */
  answer(request: FakeRequest, segments: string[]): FakeAnswer | undefined {
    const [, resource, id] = segments;
    if (request.method === 'GET' && segments.length === 3 && id) {
      if (resource === 'customers') return found(this.customers.get(id), 'customer', id);
      if (resource === 'setup_intents') return found(this.setupIntents.get(id), 'setup_intent', id);
      if (resource === 'payment_methods') return found(this.paymentMethods.get(id), 'PaymentMethod', id);
      return undefined;
    }
    if (request.method !== 'POST' || segments.length !== 2) return undefined;
    if (resource === 'customers') return this.keyed(request, () => this.createCustomer(request.form));
    if (resource === 'setup_intents') return this.keyed(request, () => this.createSetupIntent(request.form));
    if (resource === 'payment_intents' && request.form.off_session === 'true') {
      return this.keyed(request, () => this.chargeOffSession(request));
    }
    return undefined;
  }

  /** The refusal a plain PaymentIntent create gets when its key was first used here. */
  keyConflict(request: FakeRequest): FakeAnswer | undefined {
    const first = request.idempotencyKey === null ? undefined : this.saved.get(request.idempotencyKey);
    return first ? mismatch(String(request.idempotencyKey), first.path, request.path) : undefined;
  }

  /**
   * Plays the customer's browser confirming a SetupIntent: a card `pm_fake_…` is saved to its
   * customer and the intent succeeds. `outcome` is how that card behaves when charged later.
   * Returns the stored SetupIntent (for a `setup_intent.succeeded` event).
   */
  completeSetupIntent(setupIntentId: string, outcome: CardBehaviour = 'succeeds'): StripeObject {
    const setupIntent = this.setupIntents.get(setupIntentId);
    if (!setupIntent) throw new Error(`fake Stripe has no setup intent ${setupIntentId}`);
    if (setupIntent.status !== 'requires_payment_method') {
      throw new Error(
        `fake Stripe: setup intent ${setupIntentId} is ${String(setupIntent.status)}, not awaiting a card`,
      );
    }
    const card: StripeObject = {
      id: fakeId('pm'),
      object: 'payment_method',
      type: 'card',
      card: {
        brand: 'visa',
        last4: '4242',
        exp_month: 12,
        exp_year: new Date().getUTCFullYear() + 3,
        funding: 'credit',
      },
      customer: setupIntent.customer,
      created: now(),
      livemode: false,
      metadata: {},
    };
    this.paymentMethods.set(String(card.id), card);
    this.behaviours.set(String(card.id), outcome);
    setupIntent.status = 'succeeded';
    setupIntent.payment_method = card.id;
    return setupIntent;
  }

  /** Changes how a saved card behaves from its next off-session charge on. */
  setCardBehaviour(paymentMethodId: string, outcome: CardBehaviour): void {
    if (!this.paymentMethods.has(paymentMethodId))
      throw new Error(`fake Stripe has no payment method ${paymentMethodId}`);
    this.behaviours.set(paymentMethodId, outcome);
  }

  /** Runs a create under Stripe's idempotency: replay the saved answer, refuse a reuse, or act and save. */
  private keyed(request: FakeRequest, act: () => FakeAnswer): FakeAnswer {
    const key = request.idempotencyKey;
    if (key === null) return act();
    const form = canonical(request.form);
    const first = this.saved.get(key);
    if (first) {
      if (first.path !== request.path || first.form !== form) return mismatch(key, first.path, request.path);
      return { status: first.status, body: structuredClone(first.body), headers: { 'idempotent-replayed': 'true' } };
    }
    if (this.usedByPlainCreate(key)) return mismatch(key, '/v1/payment_intents', request.path);
    const answer = act();
    if (answer.status !== 400) {
      this.saved.set(key, { path: request.path, form, status: answer.status, body: structuredClone(answer.body) });
    }
    return answer;
  }

  private createCustomer(form: Record<string, string>): FakeAnswer {
    const customer: StripeObject = {
      id: fakeId('cus'),
      object: 'customer',
      email: form.email ?? null,
      metadata: bracketed(form, 'metadata'),
      created: now(),
      livemode: false,
    };
    this.customers.set(String(customer.id), customer);
    return { status: 200, body: customer };
  }

  private createSetupIntent(form: Record<string, string>): FakeAnswer {
    const customer = form.customer ?? null;
    if (customer !== null && !this.customers.has(customer))
      return missing('customer', `No such customer: '${customer}'`);
    const id = fakeId('seti');
    const automatic = form['automatic_payment_methods[enabled]'];
    const setupIntent: StripeObject = {
      id,
      object: 'setup_intent',
      client_secret: `${id}_secret_${fakeId('s').slice(-12)}`,
      customer,
      usage: form.usage ?? 'off_session',
      status: 'requires_payment_method',
      payment_method: null,
      payment_method_types: ['card'],
      automatic_payment_methods: automatic === undefined ? null : { enabled: automatic === 'true' },
      metadata: bracketed(form, 'metadata'),
      created: now(),
      livemode: false,
    };
    this.setupIntents.set(id, setupIntent);
    return { status: 200, body: setupIntent };
  }

  /** Charges the saved card by its behaviour: 200 (succeeded or processing) or 402 with the intent. */
  private chargeOffSession(request: FakeRequest): FakeAnswer {
    const { form } = request;
    if (form.confirm !== 'true') return invalid('off_session', 'off_session can only be used when confirm is true.');
    if (form.amount === undefined || !/^[1-9]\d*$/.test(form.amount)) {
      return invalid('amount', 'amount must be a positive integer in the currency’s minor unit.');
    }
    if (!form.currency) return invalid('currency', 'Missing required param: currency.');
    const customer = form.customer;
    if (!customer || !this.customers.has(customer)) return missing('customer', `No such customer: '${customer ?? ''}'`);
    const card = form.payment_method === undefined ? undefined : this.paymentMethods.get(form.payment_method);
    if (!card) return missing('payment_method', `No such PaymentMethod: '${form.payment_method ?? ''}'`);
    if (card.customer !== customer) {
      return missing(
        'payment_method',
        `The PaymentMethod '${String(card.id)}' is not attached to customer '${customer}'.`,
      );
    }
    const outcome = this.behaviours.get(String(card.id)) ?? 'succeeds';
    const id = fakeId('pi');
    const amount = Number(form.amount);
    const cardError = cardErrors[outcome];
    // An authentication_required refusal comes before any charge; a decline leaves a failed one.
    const charge = outcome === 'requires_authentication' ? null : fakeId('ch');
    const lastPaymentError = cardError
      ? { type: 'card_error', ...cardError, ...(charge ? { charge } : {}), payment_method: card }
      : null;
    const intent: StripeObject = {
      id,
      object: 'payment_intent',
      amount,
      amount_received: outcome === 'succeeds' ? amount : 0,
      currency: form.currency,
      status: intentStatus[outcome],
      client_secret: `${id}_secret_${fakeId('s').slice(-12)}`,
      customer,
      payment_method: card.id,
      latest_charge: charge,
      last_payment_error: lastPaymentError,
      capture_method: 'automatic',
      confirmation_method: 'automatic',
      description: form.description ?? null,
      metadata: bracketed(form, 'metadata'),
      created: now(),
      livemode: false,
    };
    this.paymentIntents.set(id, intent);
    this.charges.push({
      paymentIntent: id,
      customer,
      paymentMethod: String(card.id),
      amount,
      currency: form.currency,
      outcome,
      idempotencyKey: request.idempotencyKey,
    });
    const holdMs = this.stallAfterChargeMs;
    this.stallAfterChargeMs = 0;
    // Snapshots: the answer is what Stripe said then, whatever a test later does to the stored intent.
    const body = lastPaymentError
      ? { error: { ...structuredClone(lastPaymentError), payment_intent: structuredClone(intent) } }
      : structuredClone(intent);
    return { status: lastPaymentError ? 402 : 200, body, ...(holdMs > 0 ? { holdMs } : {}) };
  }
}

/** Waits `ms` before an answer is written, or less if the client closes the connection first. */
export async function holdAnswer(res: ServerResponse, ms: number): Promise<void> {
  if (res.destroyed) return;
  await new Promise<void>((resolve) => {
    const timer = setTimeout(resolve, ms);
    res.once('close', () => {
      clearTimeout(timer);
      resolve();
    });
  });
}

function found(object: StripeObject | undefined, what: string, id: string): FakeAnswer {
  if (object) return { status: 200, body: object };
  return { status: 404, body: missingError(undefined, `No such ${what}: '${id}'`) };
}

function missing(param: string, message: string): FakeAnswer {
  return { status: 400, body: missingError(param, message) };
}

function missingError(param: string | undefined, message: string): StripeObject {
  return { error: { type: 'invalid_request_error', code: 'resource_missing', ...(param ? { param } : {}), message } };
}

function invalid(param: string, message: string): FakeAnswer {
  return { status: 400, body: { error: { type: 'invalid_request_error', code: 'parameter_invalid', param, message } } };
}

/** Stripe's answer to an Idempotency-Key reused on another endpoint or with other parameters. */
function mismatch(key: string, firstPath: string, path: string): FakeAnswer {
  const message =
    firstPath === path
      ? `Keys for idempotent requests can only be used with the same parameters they were first used with. Try using a key other than '${key}' if you meant to execute a different request.`
      : `Keys for idempotent requests can only be used for the same endpoint they were first used for ('${firstPath}' vs '${path}'). Try using a key other than '${key}' if you meant to execute a different request.`;
  return { status: 400, body: { error: { type: 'idempotency_error', message } } };
}

/** The form in one order, so two requests with the same parameters compare equal. */
function canonical(form: Record<string, string>): string {
  return JSON.stringify(Object.entries(form).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)));
}

function now(): number {
  return Math.floor(Date.now() / 1000);
}
