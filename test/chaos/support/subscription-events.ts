import type { RevenueCatSubscription } from '@tally/billing-core';
import type { FakeRevenueCat } from '../../support/fakes/fake-revenuecat';
import type { FakeStripe } from '../../support/fakes/fake-stripe';
import { revenueCatSubscriptionEvent } from '../../support/revenuecat-events';
import { stripeEventBody, stripeInvoice, stripeSubscription } from '../../support/stripe-events';
import { canaryEmail } from './events';
import type { ExpectedStripeSubscription } from './invariants';
import type { Prng } from './prng';
import type { SimulatedEvent } from './provider-simulator';

/** The chaos cluster's catalog (catalog.example.json): one plan, a monthly and an annual price. */
export const catalogPlan = 'premium';
export const monthlyPrice = 'price_premium_monthly';
export const annualPrice = 'price_premium_annual';
/** Tokens per paid invoice: monthly creditsPerPeriod 100; annual 1200 / 12 now. */
export const tokensPerInvoice = 100;
/** Tokens per annual installment (1200 / 12). */
export const tokensPerInstallment = 100;

/** One event of a lifecycle and the step of the provider's timeline it announces. */
export interface TimelineEvent {
  event: SimulatedEvent;
  /** Index into the lifecycle's states: the provider is at least this far when it sends the event. */
  step: number;
}

/**
 * One Stripe subscription's life: Stripe's subscription object at each step of its timeline, the
 * events announcing the steps (created / updated / deleted / invoice.paid), and the final state
 * the model expects Tally to hold.
 */
export interface StripeLifecycle {
  userId: string;
  subscriptionId: string;
  states: Record<string, unknown>[];
  events: TimelineEvent[];
  invoices: { id: string; interval: 'month' | 'year' }[];
  expected: ExpectedStripeSubscription;
}

/**
 * A PRNG-chosen lifecycle: created + first invoice (monthly or annual); a monthly plan may renew
 * (a second monthly invoice) or upgrade to annual (updated + an annual invoice); it may be set to
 * cancel at the period end (updated); `deleted` ends it (customer.subscription.deleted, canceled).
 */
export function stripeLifecycle(
  rng: Prng,
  prefix: string,
  index: number,
  userId: string,
  options: { annual: boolean; deleted: boolean },
): StripeLifecycle {
  const subscriptionId = `sub_${prefix}_${index}`;
  const customer = `cus_${prefix}_${index}`;
  const states: Record<string, unknown>[] = [];
  const events: TimelineEvent[] = [];
  const invoices: { id: string; interval: 'month' | 'year' }[] = [];
  let price = options.annual && rng.chance(0.5) ? annualPrice : monthlyPrice;
  let status = 'active';
  let cancelAtPeriodEnd = false;
  const state = () =>
    stripeSubscription({ id: subscriptionId, customer, priceId: price, status, userId, cancelAtPeriodEnd });
  const subscriptionEvent = (type: string) => {
    const eventId = `evt_${prefix}_${index}_${events.length}`;
    events.push({
      event: { provider: 'stripe', id: eventId, body: stripeEventBody(type, state(), { eventId }) },
      step: states.length - 1,
    });
  };
  const invoicePaid = (billingReason: string) => {
    const invoiceId = `in_${prefix}_${index}_${invoices.length + 1}`;
    const interval = price === annualPrice ? 'year' : 'month';
    invoices.push({ id: invoiceId, interval });
    const eventId = `evt_${prefix}_${index}_${events.length}`;
    const invoice = stripeInvoice({
      id: invoiceId,
      subscription: subscriptionId,
      customer,
      priceId: price,
      amountPaid: interval === 'year' ? 9_999 : 999,
      billingReason,
      email: canaryEmail,
    });
    events.push({
      event: { provider: 'stripe', id: eventId, body: stripeEventBody('invoice.paid', invoice, { eventId }) },
      step: states.length - 1,
    });
  };

  states.push(state());
  subscriptionEvent('customer.subscription.created');
  invoicePaid('subscription_create');
  if (price === monthlyPrice) {
    const roll = rng.next();
    if (options.annual && roll < 0.35) {
      price = annualPrice;
      states.push(state());
      subscriptionEvent('customer.subscription.updated');
      invoicePaid('subscription_update');
    } else if (roll < 0.7) {
      invoicePaid('subscription_cycle');
    }
  }
  if (rng.chance(0.3)) {
    cancelAtPeriodEnd = true;
    states.push(state());
    subscriptionEvent('customer.subscription.updated');
  }
  if (options.deleted) {
    status = 'canceled';
    cancelAtPeriodEnd = false;
    states.push(state());
    subscriptionEvent('customer.subscription.deleted');
  }
  return {
    userId,
    subscriptionId,
    states,
    events,
    invoices,
    expected: {
      userId,
      status,
      planId: catalogPlan,
      interval: price === annualPrice ? 'year' : 'month',
      annualInvoices: invoices.filter((invoice) => invoice.interval === 'year').map((invoice) => invoice.id),
    },
  };
}

/**
 * Stripe's side of the lifecycles: the fake holds each subscription's current state and moves it
 * forward (never back) to the step an event announces just before that event is sent, as Stripe
 * changes a subscription and then notifies. Deliveries may be shuffled; the truth only advances.
 */
export class StripeTimeline {
  private readonly current = new Map<string, number>();
  private readonly byEvent = new Map<string, { lifecycle: StripeLifecycle; step: number }>();

  constructor(
    private readonly fake: FakeStripe,
    private readonly lifecycles: StripeLifecycle[],
  ) {
    for (const lifecycle of lifecycles) {
      for (const { event, step } of lifecycle.events) this.byEvent.set(event.id, { lifecycle, step });
      this.moveTo(lifecycle, 0);
    }
  }

  /** Before sending `event`: Stripe is at least at the step it announces. */
  advance(event: SimulatedEvent): void {
    const found = this.byEvent.get(event.id);
    if (found) this.moveTo(found.lifecycle, found.step);
  }

  /** Every subscription at its final state (the truth once everything has happened). */
  finish(): void {
    for (const lifecycle of this.lifecycles) this.moveTo(lifecycle, lifecycle.states.length - 1);
  }

  private moveTo(lifecycle: StripeLifecycle, step: number): void {
    const at = this.current.get(lifecycle.subscriptionId);
    if (at !== undefined && at >= step) return;
    const state = lifecycle.states[step];
    if (!state) throw new Error(`${lifecycle.subscriptionId} has no step ${step}`);
    this.current.set(lifecycle.subscriptionId, step);
    this.fake.putSubscription(state);
  }
}

/** One RevenueCat customer's life: the REST state at each step, the webhooks, the final plan. */
export interface RevenueCatLifecycle {
  userId: string;
  states: Record<string, RevenueCatSubscription>[];
  events: TimelineEvent[];
  /** The plan RevenueCat finally reports active, or null. */
  expectedPlan: string | null;
}

const day = 24 * 3600_000;
const iso = (offsetMs: number) => new Date(Date.now() + offsetMs).toISOString();

/**
 * INITIAL_PURCHASE of premium.monthly; maybe RENEWAL, PRODUCT_CHANGE to premium.annual,
 * CANCELLATION (auto-renew off, still active), then maybe EXPIRATION (inactive).
 */
export function revenueCatLifecycle(rng: Prng, prefix: string, index: number, userId: string): RevenueCatLifecycle {
  const states: Record<string, RevenueCatSubscription>[] = [];
  const events: TimelineEvent[] = [];
  let product = 'premium.monthly';
  let expires = iso(30 * day);
  let unsubscribed: string | null = null;
  const step = (type: string) => {
    states.push({
      [product]: {
        expires_date: expires,
        purchase_date: iso(-day),
        store: 'app_store',
        is_sandbox: false,
        unsubscribe_detected_at: unsubscribed,
        period_type: 'normal',
      },
    });
    const id = `${prefix}-${index}-${events.length}`;
    events.push({
      event: {
        provider: 'revenuecat',
        id,
        body: revenueCatSubscriptionEvent({ id, type, userId, productId: product }),
      },
      step: states.length - 1,
    });
  };
  step('INITIAL_PURCHASE');
  if (rng.chance(0.6)) {
    expires = iso(60 * day);
    step('RENEWAL');
  }
  if (rng.chance(0.3)) {
    product = 'premium.annual';
    expires = iso(365 * day);
    step('PRODUCT_CHANGE');
  }
  let expired = false;
  if (rng.chance(0.5)) {
    unsubscribed = iso(-60_000);
    step('CANCELLATION');
    if (rng.chance(0.6)) {
      expires = iso(-60_000);
      expired = true;
      step('EXPIRATION');
    }
  }
  return { userId, states, events, expectedPlan: expired ? null : catalogPlan };
}

/** RevenueCat's side: the fake's subscriber state moves forward to each event's step before it is sent. */
export class RevenueCatTimeline {
  private readonly current = new Map<string, number>();
  private readonly byEvent = new Map<string, { lifecycle: RevenueCatLifecycle; step: number }>();

  constructor(
    private readonly fake: FakeRevenueCat,
    lifecycles: RevenueCatLifecycle[],
  ) {
    for (const lifecycle of lifecycles) {
      for (const { event, step } of lifecycle.events) this.byEvent.set(event.id, { lifecycle, step });
    }
  }

  advance(event: SimulatedEvent): void {
    const found = this.byEvent.get(event.id);
    if (!found) return;
    const at = this.current.get(found.lifecycle.userId);
    if (at !== undefined && at >= found.step) return;
    const state = found.lifecycle.states[found.step];
    if (!state) throw new Error(`${found.lifecycle.userId} has no step ${found.step}`);
    this.current.set(found.lifecycle.userId, found.step);
    this.fake.setSubscriber(found.lifecycle.userId, state);
  }
}
