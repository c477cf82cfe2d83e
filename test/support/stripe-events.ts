import { randomUUID } from 'node:crypto';

/** Unique Stripe-style ids per test run: `prefix_<random>`. */
export function stripeId(prefix: string): string {
  return `${prefix}_${randomUUID().replaceAll('-', '').slice(0, 20)}`;
}

/** A Stripe event envelope (current API shape) around an object, as a JSON body. */
export function stripeEventBody(
  type: string,
  object: Record<string, unknown>,
  options: { eventId?: string } = {},
): string {
  return JSON.stringify({
    id: options.eventId ?? stripeId('evt'),
    object: 'event',
    api_version: '2026-10-28.endive',
    created: Math.floor(Date.now() / 1000),
    livemode: false,
    pending_webhooks: 1,
    request: { id: null, idempotency_key: null },
    type,
    data: { object },
  });
}

/** A subscription as the API (2025-03-31+) returns it: periods on the items. */
export function stripeSubscription(options: {
  id: string;
  customer: string;
  priceId: string;
  status?: string;
  userId?: string | null;
  cancelAtPeriodEnd?: boolean;
  periodEnd?: number;
}): Record<string, unknown> {
  const now = Math.floor(Date.now() / 1000);
  return {
    id: options.id,
    object: 'subscription',
    customer: options.customer,
    status: options.status ?? 'active',
    cancel_at_period_end: options.cancelAtPeriodEnd ?? false,
    canceled_at: options.status === 'canceled' ? now : null,
    ended_at: options.status === 'canceled' ? now : null,
    livemode: false,
    metadata: options.userId ? { user_id: options.userId } : {},
    items: {
      object: 'list',
      data: [
        {
          id: `si_${options.id}`,
          object: 'subscription_item',
          price: { id: options.priceId, object: 'price' },
          current_period_start: now,
          current_period_end: options.periodEnd ?? now + 30 * 24 * 3600,
        },
      ],
    },
  };
}

/** The paid first invoice of an annual premium subscription (9990: its first twelfth credited, eleven scheduled). */
export function stripeAnnualInvoice(options: { id: string; subscription: string; customer: string }) {
  return stripeInvoice({ ...options, priceId: 'price_premium_annual', amountPaid: 9990 });
}

/** A paid subscription invoice in the current shape (subscription under parent.subscription_details). */
export function stripeInvoice(options: {
  id: string;
  subscription: string;
  customer: string;
  priceId: string;
  amountPaid: number;
  billingReason?: string;
  email?: string;
  /** The line's period end (unix seconds); default 30 days from now. */
  periodEnd?: number;
}): Record<string, unknown> {
  const now = Math.floor(Date.now() / 1000);
  return {
    id: options.id,
    object: 'invoice',
    status: 'paid',
    customer: options.customer,
    customer_email: options.email ?? null,
    amount_paid: options.amountPaid,
    amount_remaining: 0,
    currency: 'usd',
    billing_reason: options.billingReason ?? 'subscription_create',
    parent: {
      type: 'subscription_details',
      subscription_details: { subscription: options.subscription, metadata: null },
    },
    lines: {
      object: 'list',
      data: [
        {
          id: `il_${options.id}`,
          object: 'line_item',
          amount: options.amountPaid,
          period: { start: now, end: options.periodEnd ?? now + 30 * 24 * 3600 },
          pricing: { type: 'price_details', price_details: { price: options.priceId, product: 'prod_x' } },
        },
      ],
    },
  };
}

/** A completed subscription-mode Checkout Session. */
export function stripeSubscriptionCheckout(options: {
  id: string;
  userId: string;
  customer: string;
  subscription: string;
  paymentStatus?: string;
}): Record<string, unknown> {
  return {
    id: options.id,
    object: 'checkout.session',
    mode: 'subscription',
    status: 'complete',
    payment_status: options.paymentStatus ?? 'paid',
    client_reference_id: options.userId,
    customer: options.customer,
    subscription: options.subscription,
    payment_intent: null,
    amount_total: 999,
    currency: 'usd',
    metadata: {},
  };
}

/** A completed payment-mode Checkout Session for a token pack (line items only via the API). */
export function stripePackCheckout(options: {
  id: string;
  userId: string;
  customer: string;
  paymentIntent: string;
  amountTotal?: number;
  paymentStatus?: string;
  email?: string;
}): Record<string, unknown> {
  return {
    id: options.id,
    object: 'checkout.session',
    mode: 'payment',
    status: 'complete',
    payment_status: options.paymentStatus ?? 'paid',
    client_reference_id: options.userId,
    customer: options.customer,
    customer_details: { email: options.email ?? null },
    subscription: null,
    payment_intent: options.paymentIntent,
    amount_total: options.amountTotal ?? 499,
    currency: 'usd',
    metadata: {},
  };
}

/** A payment_intent.succeeded object for a pack. */
export function stripePackIntent(options: {
  id: string;
  userId: string;
  customer: string;
  packId?: string;
  amount?: number;
  email?: string;
  extraMetadata?: Record<string, string>;
}): Record<string, unknown> {
  return {
    id: options.id,
    object: 'payment_intent',
    amount: options.amount ?? 499,
    amount_received: options.amount ?? 499,
    currency: 'usd',
    customer: options.customer,
    status: 'succeeded',
    receipt_email: options.email ?? null,
    metadata: { user_id: options.userId, pack_id: options.packId ?? 'tokens_100', ...options.extraMetadata },
  };
}

/** A refunded charge of a payment intent: fully by default, partly with `amountRefunded` < `amount`. */
export function stripeRefundedCharge(options: {
  id: string;
  paymentIntent: string;
  amount?: number;
  amountRefunded?: number;
}) {
  const amount = options.amount ?? 499;
  const amountRefunded = options.amountRefunded ?? amount;
  return {
    id: options.id,
    object: 'charge',
    amount,
    amount_refunded: amountRefunded,
    refunded: amountRefunded >= amount,
    currency: 'usd',
    payment_intent: options.paymentIntent,
    metadata: {},
  };
}

/**
 * A Dispute as the API (and the charge.dispute.* webhooks) show it: `balance_transactions` holds
 * the withdrawal (negative) once Stripe has taken the funds, and the reinstatement (positive)
 * once it gave them back (a dispute won). Field names from stripe-node's Dispute type.
 */
export function stripeDispute(options: {
  id: string;
  charge: string;
  paymentIntent: string | null;
  amount?: number;
  status?: string;
  withdrawn?: boolean;
  reinstated?: boolean;
}): Record<string, unknown> {
  const amount = options.amount ?? 499;
  const balanceTransaction = (sign: 1 | -1, category: string) => ({
    id: stripeId('txn'),
    object: 'balance_transaction',
    amount: sign * amount,
    currency: 'usd',
    fee: sign === -1 ? 1500 : -1500,
    net: sign * amount - (sign === -1 ? 1500 : -1500),
    reporting_category: category,
    type: 'adjustment',
  });
  return {
    id: options.id,
    object: 'dispute',
    amount,
    balance_transactions: [
      ...(options.withdrawn || options.reinstated ? [balanceTransaction(-1, 'dispute')] : []),
      ...(options.reinstated ? [balanceTransaction(1, 'dispute_reversal')] : []),
    ],
    charge: options.charge,
    created: Math.floor(Date.now() / 1000),
    currency: 'usd',
    is_charge_refundable: false,
    livemode: false,
    metadata: {},
    payment_intent: options.paymentIntent,
    reason: 'fraudulent',
    status:
      options.status ?? (options.reinstated ? 'won' : options.withdrawn ? 'needs_response' : 'warning_needs_response'),
  };
}
