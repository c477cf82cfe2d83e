import { grantDueInstallments } from '@tally/billing-core';
import { sql } from 'kysely';
import { stripeAnnualInvoice, stripeEventBody, stripeId, stripeSubscription } from '../../support/stripe-events';
import { stripeStateOf } from '../../support/stripe-state';
import { quickRetryLater, suiteStackWithFakeStripe } from '../../support/suite';

/**
 * Regression for the chaos suite's stripe-subscription-lifecycles scenario (seed 2): an annual
 * invoice.paid applied after its subscription's deletion scheduled eleven installments that no
 * later event voided, so a deleted subscription went on being credited every month.
 */
describe('an annual invoice applied after its subscription was deleted', () => {
  const { stack, fake } = suiteStackWithFakeStripe({ worker: { retryLater: quickRetryLater } });

  const post = (body: string) => stack.deliverStripe(body);
  const finished = (eventId: string) => stack.finishedInboxRow('stripe', eventId);
  const options = { batchSize: 50, processingStaleAfterMs: 60_000, maxAttempts: 5 };

  /** A deleted annual subscription whose deletion and first invoice arrive in `order`. */
  async function deletedAnnual(order: 'deleted first' | 'invoice first') {
    const userId = stripeId('user');
    const customer = stripeId('cus');
    const subscriptionId = stripeId('sub');
    const invoiceId = stripeId('in');
    // By the time either event is handled, Stripe has already deleted the subscription.
    fake.putSubscription(
      stripeSubscription({ id: subscriptionId, customer, priceId: 'price_premium_annual', userId, status: 'canceled' }),
    );
    const deleted = stripeEventBody('customer.subscription.deleted', {
      id: subscriptionId,
      object: 'subscription',
      customer,
    });
    const invoice = stripeEventBody(
      'invoice.paid',
      stripeAnnualInvoice({ id: invoiceId, subscription: subscriptionId, customer }),
    );
    const [first, second] = order === 'deleted first' ? [deleted, invoice] : [invoice, deleted];
    const firstId = await post(first);
    if (order === 'deleted first') await finished(firstId);
    const secondId = await post(second);
    const rows = [await finished(firstId), await finished(secondId)];
    // A year passes: every installment still scheduled would now be granted.
    await sql`UPDATE stripe_installments SET due_at = now() - interval '1 minute'
              WHERE subscription_id = ${subscriptionId}`.execute(stack.db);
    await grantDueInstallments(stack.outboxDeps(), options);
    const state = await stripeStateOf(stack.db, userId);
    return { rows, state, invoiceId };
  }

  it('credits the first twelfth and voids every installment, as when the deletion comes second', async () => {
    const { rows, state, invoiceId } = await deletedAnnual('deleted first');
    expect(rows.map((row) => [row.type, row.status, row.outcome_code])).toEqual([
      ['customer.subscription.deleted', 'processed', 'subscription_synced'],
      ['invoice.paid', 'processed', 'credited'],
    ]);
    expect(state.balance).toBe(100);
    expect(state.ledger.map((entry) => entry.reference)).toEqual([`stripe:invoice:${invoiceId}`]);
    expect(state.installments.map((row) => [row.sequence, row.status])).toEqual(
      Array.from({ length: 11 }, (_, i) => [i + 1, 'void']),
    );
    expect(rows[1]?.outcome_detail).toContain('11 installments scheduled, 11 voided (subscription canceled)');

    // Delivered first, the invoice waits for the subscription and ends the same way.
    const control = await deletedAnnual('invoice first');
    expect(control.state.balance).toBe(100);
    expect(control.state.installments.map((row) => [row.sequence, row.status])).toEqual(
      Array.from({ length: 11 }, (_, i) => [i + 1, 'void']),
    );
  });
});
