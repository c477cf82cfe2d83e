import type { Catalog } from '../../catalog/catalog';
import { ignored } from '../../inbox/inbox-handler';
import type { ProviderPorts } from '../../ports/provider-ports';
import type { EventPolicy } from '../../provider-data/payment-environment';
import { createProviderHandler, defineRoute, type EventRoute } from '../shared/create-provider-handler';
import {
  createDisputeFundsRoute,
  disputeStatusRoute,
  stripeDisputeFundsEventTypes,
  stripeDisputeStatusEventTypes,
} from './routes/charge-dispute';
import { createChargeRefundedRoute } from './routes/charge-refunded';
import { createCheckoutSessionRoute } from './routes/checkout-session-completed';
import { createInvoicePaidRoute } from './routes/invoice-paid';
import { createPaymentIntentSucceededRoute } from './routes/payment-intent-succeeded';
import { setupIntentSucceededRoute } from './routes/setup-intent-succeeded';
import { createSubscriptionEventsRoute } from './routes/subscription-events';
import { parseStripeEvent, type StripeEvent } from './stripe-event';

export interface StripeHandlerDeps {
  catalog: Catalog;
  ports: ProviderPorts;
  policy: EventPolicy;
}

/**
 * The Stripe event types Tally applies (the routing table's keys). Reconciliation backfills only
 * these from the Events API: other types would be recorded and ignored anyway.
 */
export const stripeHandledEventTypes = [
  'payment_intent.succeeded',
  'setup_intent.succeeded',
  'checkout.session.completed',
  'checkout.session.async_payment_succeeded',
  'invoice.paid',
  'customer.subscription.created',
  'customer.subscription.updated',
  'customer.subscription.deleted',
  'charge.refunded',
  ...stripeDisputeFundsEventTypes,
  ...stripeDisputeStatusEventTypes,
] as const;
export type StripeHandledEventType = (typeof stripeHandledEventTypes)[number];

/** Stripe's routing table: one route per event family; other types are recorded and ignored. */
export function createStripeHandler(deps: StripeHandlerDeps) {
  const checkout = createCheckoutSessionRoute(deps);
  const subscriptions = createSubscriptionEventsRoute(deps);
  const disputeFunds = createDisputeFundsRoute(deps);
  const routes: Record<StripeHandledEventType, EventRoute<StripeEvent, unknown>> = {
    'payment_intent.succeeded': createPaymentIntentSucceededRoute(deps),
    'setup_intent.succeeded': setupIntentSucceededRoute,
    'checkout.session.completed': checkout,
    'checkout.session.async_payment_succeeded': checkout,
    'invoice.paid': createInvoicePaidRoute(deps),
    'customer.subscription.created': subscriptions,
    'customer.subscription.updated': subscriptions,
    'customer.subscription.deleted': subscriptions,
    'charge.refunded': createChargeRefundedRoute(deps),
    'charge.dispute.funds_withdrawn': disputeFunds,
    'charge.dispute.funds_reinstated': disputeFunds,
    'charge.dispute.created': disputeStatusRoute,
    'charge.dispute.updated': disputeStatusRoute,
    'charge.dispute.closed': disputeStatusRoute,
  };
  return createProviderHandler<StripeEvent>({
    parse: parseStripeEvent,
    typeOf: (event) => event.type,
    connectAccountOf: (event) => (typeof event.account === 'string' && event.account.length > 0 ? event.account : null),
    routes,
    fallback: defineRoute<StripeEvent, undefined>({
      apply: async (_trx, event) => ignored('unhandled_type', `event type ${event.type} is not handled`),
    }),
    policy: deps.policy,
  });
}
