import type { FakeStripe } from './fakes/fake-stripe';
import type { TestStack } from './stack';
import { stripeAnnualInvoice, stripeEventBody, stripeId, stripeSubscription } from './stripe-events';

/**
 * An annual premium subscription for `userId`, created and then its first invoice paid, each event
 * delivered through the real ingest and processed: the first twelfth is granted and eleven
 * installments are scheduled. `fake` answers the subscription's re-read.
 */
export async function subscribeAnnualAndPayFirstInvoice(stack: TestStack, fake: FakeStripe, userId: string) {
  const customer = stripeId('cus');
  const subscriptionId = stripeId('sub');
  const invoiceId = stripeId('in');
  fake.putSubscription(stripeSubscription({ id: subscriptionId, customer, priceId: 'price_premium_annual', userId }));
  const deliver = async (body: string) => stack.finishedInboxRow('stripe', await stack.deliverStripe(body));
  await deliver(
    stripeEventBody('customer.subscription.created', { id: subscriptionId, object: 'subscription', customer }),
  );
  await deliver(
    stripeEventBody('invoice.paid', stripeAnnualInvoice({ id: invoiceId, subscription: subscriptionId, customer })),
  );
  return { customer, subscriptionId, invoiceId };
}
