import type { InboxEventRow } from '../db/schema';

export const paymentEnvironments = ['production', 'sandbox'] as const;
export type PaymentEnvironment = (typeof paymentEnvironments)[number];

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
 * The environment an inbox row came from, as ingest stored it: Stripe `livemode` and RevenueCat
 * `environment` (PRODUCTION or SANDBOX) both land in `livemode`. Null when the event did not say.
 */
export function paymentEnvironmentOf(row: Pick<InboxEventRow, 'livemode'>): PaymentEnvironment | null {
  if (row.livemode === null) return null;
  return row.livemode ? 'production' : 'sandbox';
}
