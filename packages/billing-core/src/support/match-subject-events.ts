import type { ExpressionBuilder } from 'kysely';
import type { DB } from '../db/schema';
import type { SupportSubject } from './user-support-view';

/**
 * The filter of the subject's inbox events (the events and linked-ids sections share it): filed
 * under one of its ids, or a Stripe event naming one of its Stripe ids.
 */
export function matchSubjectEvents(subject: SupportSubject) {
  return (eb: ExpressionBuilder<DB, 'inbox_events'>) => {
    const { customers, subscriptions, paymentIntents, invoices } = subject.stripeIds;
    const stripe = [
      ...(customers.length > 0 ? [eb('provider_customer_id', 'in', customers)] : []),
      ...(subscriptions.length > 0 ? [eb('provider_subscription_id', 'in', subscriptions)] : []),
      ...(paymentIntents.length > 0 ? [eb('provider_payment_intent_id', 'in', paymentIntents)] : []),
      ...(invoices.length > 0 ? [eb('provider_invoice_id', 'in', invoices)] : []),
    ];
    const byUser = eb('user_id', 'in', subject.userIds);
    return stripe.length === 0 ? byUser : eb.or([byUser, eb.and([eb('provider', '=', 'stripe'), eb.or(stripe)])]);
  };
}
