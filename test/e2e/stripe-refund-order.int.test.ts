import { eventually, TestStack } from '../support/stack';
import { stripeEventBody, stripeId, stripePackIntent, stripeRefundedCharge } from '../support/stripe-events';
import { stripeStateOf } from '../support/stripe-state';

/** Regression for the chaos suite's stripe-out-of-order-refunds scenario (seed 42). */
describe('a Stripe refund delivered before the payment it refunds', () => {
  let stack: TestStack;
  beforeAll(async () => {
    stack = await TestStack.start();
    stack.startWorker({ retryLater: { baseDelayMs: 100, maxDelayMs: 300, maxWaitMs: 60_000 } });
  });
  afterAll(() => stack.stop());

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

  it('still ignores the refund of an invoice charge, whose payment is never recorded under its intent', async () => {
    const charge = {
      ...stripeRefundedCharge({ id: stripeId('ch'), paymentIntent: stripeId('pi') }),
      invoice: stripeId('in'),
    };
    const eventId = await post(stripeEventBody('charge.refunded', charge));
    const finished = await eventually('the invoice refund to finish', async () => {
      const current = await row(eventId);
      return current?.status === 'ignored' ? current : undefined;
    });
    expect(finished.outcome_code).toBe('unknown_payment');
  });
});
