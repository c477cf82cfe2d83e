import { eventually } from '../../support/stack';
import {
  stripeAnnualInvoice,
  stripeDispute,
  stripeEventBody,
  stripeId,
  stripePackIntent,
  stripeRefundedCharge,
  stripeSubscription,
} from '../../support/stripe-events';
import { stripeStateOf } from '../../support/stripe-state';
import { quickRetryLater, suiteStackWithFakeStripe } from '../../support/suite';

/** Regression for the chaos suite's stripe-out-of-order-refunds scenario (seed 42). */
describe('a Stripe refund or chargeback delivered before the payment it refers to', () => {
  const { stack, fake } = suiteStackWithFakeStripe({ worker: { retryLater: quickRetryLater } });

  const post = (body: string) => stack.deliverStripe(body);
  const row = async (eventId: string) => (await stack.inboxRows('stripe', eventId))[0];

  it('waits for the payment, then takes the tokens back once: the pack is not left credited', async () => {
    const userId = stripeId('user');
    const paymentIntentId = stripeId('pi');
    const chargeId = stripeId('ch');
    const refundId = await post(
      stripeEventBody('charge.refunded', stripeRefundedCharge({ id: chargeId, paymentIntent: paymentIntentId })),
    );
    const waiting = await eventually('the refund to wait', async () => {
      const current = await row(refundId);
      return current && current.deferrals >= 1 ? current : undefined;
    });
    expect({ status: waiting.status, outcome: waiting.outcome_code }).toEqual({
      status: 'received',
      outcome: 'waiting',
    });

    const paymentId = await post(
      stripeEventBody(
        'payment_intent.succeeded',
        stripePackIntent({ id: paymentIntentId, userId, customer: stripeId('cus') }),
      ),
    );
    await eventually('both events to finish', async () => {
      const [refund, payment] = [await row(refundId), await row(paymentId)];
      return refund?.status === 'processed' && payment?.status === 'processed';
    });
    const state = await stripeStateOf(stack.db, userId);
    expect({ balance: state.balance, ledger: state.ledger.map((entry) => [entry.reference, entry.amount]) }).toEqual({
      balance: 0,
      ledger: [
        [`stripe:payment:${paymentIntentId}`, 100],
        [`stripe:refund:${chargeId}`, -100],
      ],
    });
    expect((await row(refundId))?.outcome_code).toBe('refunded');
  });

  /**
   * Issue 30, item 3: the refund (or chargeback) of an invoice's charge delivered before that
   * invoice's invoice.paid was `unknown_payment` and dropped, so the annual invoice stayed credited
   * and its installments scheduled. It now waits like a pack's, and ends as if in order.
   */
  async function annualInvoicePaidAfter(first: 'refund' | 'dispute' | 'nothing') {
    const userId = stripeId('user');
    const customer = stripeId('cus');
    const subscriptionId = stripeId('sub');
    const invoiceId = stripeId('in');
    const paymentIntent = stripeId('pi');
    const charge = stripeId('ch');
    const disputeId = stripeId('dp');
    fake.putSubscription(stripeSubscription({ id: subscriptionId, customer, priceId: 'price_premium_annual', userId }));
    fake.putInvoicePayment({ invoice: invoiceId, paymentIntent, amountPaid: 9990 });
    const dispute = stripeDispute({ id: disputeId, charge, paymentIntent, amount: 9990, withdrawn: true });
    fake.putDispute(dispute);
    const takeBack =
      first === 'dispute'
        ? stripeEventBody('charge.dispute.funds_withdrawn', dispute)
        : stripeEventBody('charge.refunded', stripeRefundedCharge({ id: charge, paymentIntent, amount: 9990 }));
    await stack.finishedInboxRow(
      'stripe',
      await post(
        stripeEventBody('customer.subscription.created', { id: subscriptionId, object: 'subscription', customer }),
      ),
    );
    const invoicePaid = stripeEventBody(
      'invoice.paid',
      stripeAnnualInvoice({ id: invoiceId, subscription: subscriptionId, customer }),
    );
    let takeBackId: string;
    if (first === 'nothing') {
      await stack.finishedInboxRow('stripe', await post(invoicePaid));
      takeBackId = await post(takeBack);
    } else {
      takeBackId = await post(takeBack);
      const waiting = await eventually('the take-back to wait for its invoice', async () => {
        const current = await row(takeBackId);
        return current && current.deferrals >= 1 ? current : undefined;
      });
      expect({ status: waiting.status, outcome: waiting.outcome_code, detail: waiting.outcome_detail }).toEqual({
        status: 'received',
        outcome: 'waiting',
        detail: expect.stringContaining(`invoice ${invoiceId} of `),
      });
      expect((await stack.finishedInboxRow('stripe', await post(invoicePaid))).outcome_code).toBe('credited');
    }
    const finished = await stack.finishedInboxRow('stripe', takeBackId);
    const state = await stripeStateOf(stack.db, userId);
    const name = (text: string) =>
      text
        .replace(invoiceId, '{in}')
        .replace(charge, '{ch}')
        .replace(disputeId, '{dp}')
        .replace(subscriptionId, '{sub}');
    return {
      outcome: [finished.status, finished.outcome_code],
      balance: state.balance,
      ledger: state.ledger.map((entry) => [name(entry.reference), entry.amount, entry.balance_after, entry.reason]),
      payments: state.payments.map(({ provider_payment_id, ...payment }) => ({
        ...payment,
        provider_payment_id: name(provider_payment_id),
        ledger_reference: name(payment.ledger_reference),
      })),
      installments: state.installments.map((installment) => [
        installment.sequence,
        installment.tokens,
        installment.status,
      ]),
    };
  }

  it('waits for the invoice.paid of a refunded annual invoice, then takes it back and voids its installments, as in order', async () => {
    const outOfOrder = await annualInvoicePaidAfter('refund');
    expect(outOfOrder).toEqual({
      outcome: ['processed', 'refunded'],
      balance: 0,
      ledger: [
        ['stripe:invoice:{in}', 100, 100, 'subscription_annual_first_installment'],
        ['stripe:refund:{ch}', -100, 0, 'stripe_refund'],
      ],
      payments: [
        expect.objectContaining({
          provider_payment_id: '{in}',
          kind: 'subscription_invoice',
          status: 'refunded',
          tokens_granted: 100,
          tokens_refunded: 100,
          refund_shortfall: 0,
        }),
      ],
      installments: Array.from({ length: 11 }, (_, i) => [i + 1, 100, 'void']),
    });
    const inOrder = await annualInvoicePaidAfter('nothing');
    expect(outOfOrder).toEqual(inOrder);
  });

  it('waits for the invoice.paid of a chargebacked annual invoice, then takes it back', async () => {
    expect(await annualInvoicePaidAfter('dispute')).toEqual({
      outcome: ['processed', 'dispute_funds_withdrawn'],
      balance: 0,
      ledger: [
        ['stripe:invoice:{in}', 100, 100, 'subscription_annual_first_installment'],
        ['stripe:dispute:{dp}', -100, 0, 'stripe_dispute'],
      ],
      payments: [
        expect.objectContaining({
          provider_payment_id: '{in}',
          status: 'succeeded',
          tokens_granted: 100,
          tokens_refunded: 100,
          refund_shortfall: 0,
        }),
      ],
      installments: Array.from({ length: 11 }, (_, i) => [i + 1, 100, 'void']),
    });
  });
});
