import type { InboxEventRow, PaymentEnvironment } from '../db/schema';

export { type PaymentEnvironment, paymentEnvironments } from '../db/schema';

/**
 * Which events may move money or plans in this deployment. Events from other environments are
 * stored and marked ignored, never applied (`PAYMENT_ENVIRONMENTS`); Stripe Connect events (those
 * carrying an `account`) are ignored unless their account is listed.
 */
export interface EventPolicy {
  paymentEnvironments: ReadonlySet<PaymentEnvironment>;
  stripeConnectAccounts: ReadonlySet<string>;
}

export const productionOnlyPolicy: EventPolicy = {
  paymentEnvironments: new Set(['production']),
  stripeConnectAccounts: new Set(),
};

/**
 * The environment a provider's event names, from its live flag (Stripe `livemode`; RevenueCat
 * `environment === 'PRODUCTION'`): what ingest stores in `inbox_events.environment`. Null when the
 * event did not say.
 */
export function toPaymentEnvironment(livemode: boolean | null): PaymentEnvironment | null {
  if (livemode === null) return null;
  return livemode ? 'production' : 'sandbox';
}

/** The environment an inbox row came from, as ingest stored it. Null when the event did not say. */
export function paymentEnvironmentOf(row: Pick<InboxEventRow, 'environment'>): PaymentEnvironment | null {
  // guard: payment-environment-read
  return row.environment;
}
