import type { FakeStripe } from './fakes/fake-stripe';
import { eventually, type TestStack } from './stack';
import { stripeAnnualInvoice, stripeEventBody, stripeId, stripeInvoice, stripeSubscription } from './stripe-events';

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

/**
 * A subscription of `priceId` for `userId` whose line period ends at `periodEnd` (unix seconds):
 * its creation and its paid invoice (999) delivered through the real ingest, each processed.
 * Returns the invoice id and the two event bodies (to replay them).
 */
export async function subscribeUntil(
  stack: TestStack,
  fake: FakeStripe,
  options: { userId: string; priceId: string; periodEnd: number },
) {
  const { userId, priceId, periodEnd } = options;
  const customer = stripeId('cus');
  const subscriptionId = stripeId('sub');
  const invoiceId = stripeId('in');
  fake.putSubscription(stripeSubscription({ id: subscriptionId, customer, priceId, userId, periodEnd }));
  const bodies = [
    stripeEventBody('customer.subscription.created', { id: subscriptionId, object: 'subscription', customer }),
    stripeEventBody(
      'invoice.paid',
      stripeInvoice({ id: invoiceId, subscription: subscriptionId, customer, priceId, amountPaid: 999, periodEnd }),
    ),
  ];
  for (const body of bodies) {
    expect(await stack.finishedInboxRow('stripe', await stack.deliverStripe(body))).toMatchObject({
      status: 'processed',
    });
  }
  return { invoiceId, bodies };
}

/** Unix seconds `days` from now (a subscription line's period end). */
export const daysAhead = (days: number) => Math.floor(Date.now() / 1000) + days * 24 * 3600;

/** Replays each Stripe event of `bodies` through the admin API and waits until it is processed again. */
export async function replayStripeEvents(stack: TestStack, bodies: string[]) {
  for (const body of bodies) {
    const [row] = await stack.inboxRows('stripe', JSON.parse(body).id);
    const replays = row?.replays ?? 0;
    expect((await stack.apiRequest(`/admin/events/${row?.id}/replay`, { method: 'POST' })).status).toBe(200);
    await eventually('the replay to finish', async () => {
      const [again] = await stack.inboxRows('stripe', JSON.parse(body).id);
      return again?.status === 'processed' && again.replays === replays + 1 ? again : undefined;
    });
  }
}
