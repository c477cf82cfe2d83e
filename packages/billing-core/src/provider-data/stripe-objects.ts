import { objectAt, toIndexValue } from '../inbox/inbox-event-draft';

/**
 * The one module of Stripe object readers (webhook events' `data.object`, API answers, ingest's
 * index columns), in both the current API shapes (2025-03-31 and later) and the older ones.
 * Expandable fields may be an id string or an expanded object; every reader accepts both.
 */
export type StripeJson = Record<string, unknown>;

export function stripeIdOf(value: unknown): string | null {
  if (typeof value === 'string') return toIndexValue(value);
  if (value && typeof value === 'object' && 'id' in value) return toIndexValue((value as { id: unknown }).id);
  return null;
}

export function stripeStringAt(object: StripeJson, key: string): string | null {
  const value = object[key];
  return typeof value === 'string' && value.length > 0 ? value : null;
}

export function stripeNumberAt(object: StripeJson, key: string): number | null {
  const value = object[key];
  return typeof value === 'number' && Number.isFinite(value) ? value : null;
}

export function stripeMetadataOf(object: StripeJson, key: string): string | null {
  return toIndexValue(objectAt(object.metadata)[key]);
}

/**
 * The Tally user a Stripe object names: Checkout Sessions carry it in `client_reference_id`
 * (fallback `metadata.user_id`); PaymentIntents and Subscriptions in `metadata.user_id`.
 */
export function stripeUserOf(object: StripeJson): string | null {
  return toIndexValue(object.client_reference_id) ?? stripeMetadataOf(object, 'user_id');
}

function listData(value: unknown): StripeJson[] {
  const data = objectAt(value).data;
  return Array.isArray(data) ? data.filter((item): item is StripeJson => !!item && typeof item === 'object') : [];
}

/** An invoice's subscription: `parent.subscription_details.subscription` (new) or `subscription` (old). */
export function invoiceSubscriptionIdOf(invoice: StripeJson): string | null {
  const details = objectAt(objectAt(invoice.parent).subscription_details);
  return stripeIdOf(details.subscription) ?? stripeIdOf(invoice.subscription);
}

/** The price ids of an invoice's lines: `pricing.price_details.price` (new) or `price` (old). */
export function invoicePriceIdsOf(invoice: StripeJson): string[] {
  const ids: string[] = [];
  for (const line of listData(invoice.lines)) {
    const id =
      stripeIdOf(objectAt(objectAt(line.pricing).price_details).price) ??
      stripeIdOf(line.price) ??
      stripeIdOf(line.plan);
    if (id) ids.push(id);
  }
  return ids;
}

/**
 * The period end (`lines.data[].period.end`) of the invoice's line for `priceId`, else the latest
 * line period end; null when the invoice carries none.
 */
export function invoiceLinePeriodEndOf(invoice: StripeJson, priceId: string): Date | null {
  let latest: number | null = null;
  for (const line of listData(invoice.lines)) {
    const end = stripeNumberAt(objectAt(line.period), 'end');
    if (end === undefined || end === null) continue;
    const id =
      stripeIdOf(objectAt(objectAt(line.pricing).price_details).price) ??
      stripeIdOf(line.price) ??
      stripeIdOf(line.plan);
    if (id === priceId) return new Date(end * 1000);
    latest = latest === null ? end : Math.max(latest, end);
  }
  return latest === null ? null : new Date(latest * 1000);
}

/** A subscription's price ids (`items.data[].price`). */
export function subscriptionPriceIdsOf(subscription: StripeJson): string[] {
  const ids: string[] = [];
  for (const item of listData(subscription.items)) {
    const id = stripeIdOf(item.price) ?? stripeIdOf(item.plan);
    if (id) ids.push(id);
  }
  return ids;
}

/** Period end: `items.data[].current_period_end` (new, the latest) or `current_period_end` (old). */
export function subscriptionPeriodEndOf(subscription: StripeJson): Date | null {
  const ends = listData(subscription.items)
    .map((item) => stripeNumberAt(item, 'current_period_end'))
    .filter((end): end is number => end !== null);
  const seconds = ends.length > 0 ? Math.max(...ends) : stripeNumberAt(subscription, 'current_period_end');
  return seconds === null ? null : new Date(seconds * 1000);
}

/** Line items of a Checkout Session retrieved with `expand[]=line_items`. */
export function checkoutLinePriceIdsOf(session: StripeJson): string[] {
  return listData(session.line_items)
    .map((item) => stripeIdOf(item.price))
    .filter((id): id is string => id !== null);
}

export function secondsToDate(seconds: number | null): Date | null {
  return seconds === null ? null : new Date(seconds * 1000);
}

/**
 * What a Dispute's `balance_transactions` say about the funds (zero, one or two entries): a
 * negative one is the withdrawal, a positive one the reinstatement.
 */
export function disputeFundsOf(dispute: StripeJson): { withdrawn: boolean; reinstated: boolean } {
  const transactions = Array.isArray(dispute.balance_transactions) ? dispute.balance_transactions : [];
  const amounts = transactions
    .map((transaction) =>
      transaction && typeof transaction === 'object' ? stripeNumberAt(transaction, 'amount') : null,
    )
    .filter((amount): amount is number => amount !== null);
  return { withdrawn: amounts.some((amount) => amount < 0), reinstated: amounts.some((amount) => amount > 0) };
}
