/**
 * The Stripe API reads and writes Tally makes, behind a port so handlers never build a client.
 * Objects are Stripe's own JSON shapes (the flows narrow them with their own parsers). Every
 * create carries an idempotency key.
 */
export interface StripeApi {
  retrieveSubscription(subscriptionId: string): Promise<Record<string, unknown>>;
  retrievePaymentIntent(paymentIntentId: string): Promise<Record<string, unknown>>;
}
