import { grantDueInstallments } from '@tally/billing-core';
import { sql } from 'kysely';
import {
  stripeDispute,
  stripeEventBody,
  stripeId,
  stripePackIntent,
  stripeRefundedCharge,
} from '../../support/stripe-events';
import { subscribeAnnualAndPayFirstInvoice } from '../../support/stripe-flows';
import { stripeStateOf } from '../../support/stripe-state';
import { quickRetryLater, suiteStackWithFakeStripe } from '../../support/suite';

/**
 * Issue 30, item 1: a chargeback and a refund of the same payment, in either order. A
 * reinstatement gives back only what the payment still owes after its refunds: a dispute won and
 * then refunded ends at zero (it gave the withdrawn tokens back although the refund had already
 * claimed them), and the installments of a refunded invoice stay void. Through the real ingest
 * (signed), the worker, and the fake Stripe over HTTP answering the dispute re-reads.
 */
describe('a payment both disputed and refunded', () => {
  const { stack, fake } = suiteStackWithFakeStripe({ worker: { retryLater: quickRetryLater } });

  const deliver = async (type: string, object: Record<string, unknown>) =>
    stack.finishedInboxRow('stripe', await stack.deliverStripe(stripeEventBody(type, object)));
  const spend = (userId: string, tokens: number) =>
    stack.postPlainEntry({ userId, reference: `test:spend:${stripeId('s')}`, amount: -tokens, reason: 'test_spend' });

  /** A 100-token pack of `amount` paid and credited. */
  async function buyPack(userId: string, amount: number) {
    const paymentIntent = stripeId('pi');
    const row = await deliver(
      'payment_intent.succeeded',
      stripePackIntent({ id: paymentIntent, userId, customer: stripeId('cus'), amount }),
    );
    expect(row.outcome_code).toBe('credited');
    return { paymentIntent, charge: stripeId('ch'), disputeId: stripeId('dp') };
  }

  type Ids = { paymentIntent: string; charge: string; disputeId: string; amount: number };
  const withdraw = async (ids: Ids) => {
    const dispute = { id: ids.disputeId, charge: ids.charge, paymentIntent: ids.paymentIntent, amount: ids.amount };
    fake.putDispute(stripeDispute({ ...dispute, withdrawn: true }));
    return deliver('charge.dispute.funds_withdrawn', stripeDispute({ ...dispute, withdrawn: true }));
  };
  const reinstate = async (ids: Ids) => {
    const dispute = { id: ids.disputeId, charge: ids.charge, paymentIntent: ids.paymentIntent, amount: ids.amount };
    fake.putDispute(stripeDispute({ ...dispute, reinstated: true }));
    return deliver('charge.dispute.funds_reinstated', stripeDispute({ ...dispute, reinstated: true }));
  };
  const refund = (ids: Ids, amountRefunded: number) =>
    deliver(
      'charge.refunded',
      stripeRefundedCharge({ id: ids.charge, paymentIntent: ids.paymentIntent, amount: ids.amount, amountRefunded }),
    );

  /** The whole money state of one user's payment, with its ids replaced by their role. */
  async function moneyState(userId: string, ids: Ids) {
    const state = await stripeStateOf(stack.db, userId);
    const name = (reference: string) =>
      reference
        .replace(ids.paymentIntent, '{pi}')
        .replace(ids.disputeId, '{dp}')
        .replace(ids.charge, '{ch}')
        .replace(/^test:spend:.*/, 'spend');
    const [payment] = await stack.db
      .selectFrom('payments')
      .select([
        'status',
        'amount_minor',
        'amount_refunded_minor',
        'tokens_granted',
        'tokens_refunded',
        'refund_shortfall',
      ])
      .where('user_id', '=', userId)
      .execute();
    const dispute = await stack.db
      .selectFrom('stripe_disputes')
      .select(['tokens_owed', 'tokens_taken', 'shortfall', 'tokens_reinstated'])
      .where('dispute_id', '=', ids.disputeId)
      .executeTakeFirst();
    const shortfalls = await stack.db
      .selectFrom('take_back_shortfalls')
      .select(['source', 'shortfall', 'recovered', sql<boolean>`closed_at IS NOT NULL`.as('closed')])
      .where('user_id', '=', userId)
      .orderBy('id')
      .execute();
    return {
      balance: state.balance,
      ledger: state.ledger.map((row) => [name(row.reference), row.amount, row.balance_after]),
      payment,
      dispute,
      shortfalls,
    };
  }

  it('ends a dispute won and then fully refunded at zero, as when the refund comes after the reinstatement', async () => {
    const userId = stripeId('user');
    const ids = { ...(await buyPack(userId, 499)), amount: 499 };
    expect((await withdraw(ids)).outcome_code).toBe('dispute_funds_withdrawn');
    // The dispute holds the 100 tokens: the refund has nothing left to take.
    expect(await refund(ids, 499)).toMatchObject({ outcome_code: 'refunded' });
    const reinstated = await reinstate(ids);
    expect(reinstated).toMatchObject({ status: 'processed', outcome_code: 'dispute_funds_reinstated' });
    expect(reinstated.outcome_detail).toContain('gave back 0 of 100 tokens taken');
    expect(await moneyState(userId, ids)).toEqual({
      balance: 0,
      ledger: [
        ['stripe:payment:{pi}', 100, 100],
        ['stripe:dispute:{dp}', -100, 0],
      ],
      payment: {
        status: 'refunded',
        amount_minor: 499,
        amount_refunded_minor: 499,
        tokens_granted: 100,
        tokens_refunded: 100,
        refund_shortfall: 0,
      },
      dispute: { tokens_owed: 100, tokens_taken: 100, shortfall: 0, tokens_reinstated: 0 },
      shortfalls: [],
    });

    // The other order: reinstated first (all 100 back), then refunded (all 100 taken).
    const otherUser = stripeId('user');
    const other = { ...(await buyPack(otherUser, 499)), amount: 499 };
    await withdraw(other);
    await reinstate(other);
    expect((await refund(other, 499)).outcome_code).toBe('refunded');
    const otherState = await moneyState(otherUser, other);
    expect(otherState).toEqual({
      balance: 0,
      ledger: [
        ['stripe:payment:{pi}', 100, 100],
        ['stripe:dispute:{dp}', -100, 0],
        ['stripe:dispute:{dp}:reinstated', 100, 100],
        ['stripe:refund:{ch}', -100, 0],
      ],
      payment: (await moneyState(userId, ids)).payment,
      dispute: { tokens_owed: 100, tokens_taken: 100, shortfall: 0, tokens_reinstated: 100 },
      shortfalls: [],
    });
  });

  it('gives back after a half refund only the half the payment still pays for, and a later refund of the rest takes that half', async () => {
    const userId = stripeId('user');
    const ids = { ...(await buyPack(userId, 499)), amount: 499 };
    await withdraw(ids);
    expect((await refund(ids, 250)).outcome_code).toBe('partially_refunded');
    expect((await reinstate(ids)).outcome_detail).toContain(
      'gave back 50 of 100 tokens taken under stripe:dispute:' /* floor(100 × 250/499) = 50 stay taken */,
    );
    const halfway = await moneyState(userId, ids);
    expect(halfway).toEqual({
      balance: 50,
      ledger: [
        ['stripe:payment:{pi}', 100, 100],
        ['stripe:dispute:{dp}', -100, 0],
        ['stripe:dispute:{dp}:reinstated', 50, 50],
      ],
      payment: {
        status: 'partially_refunded',
        amount_minor: 499,
        amount_refunded_minor: 250,
        tokens_granted: 100,
        tokens_refunded: 50,
        refund_shortfall: 0,
      },
      dispute: { tokens_owed: 100, tokens_taken: 100, shortfall: 0, tokens_reinstated: 50 },
      shortfalls: [],
    });

    // Refund before the dispute at all: the same balance and payment accounting.
    const controlUser = stripeId('user');
    const control = { ...(await buyPack(controlUser, 499)), amount: 499 };
    await refund(control, 250);
    await withdraw(control);
    await reinstate(control);
    const controlState = await moneyState(controlUser, control);
    expect({ balance: controlState.balance, payment: controlState.payment }).toEqual({
      balance: halfway.balance,
      payment: halfway.payment,
    });

    // The rest refunded after the reinstatement: takes the 50 the payment still granted.
    expect(await refund(ids, 499)).toMatchObject({ outcome_code: 'refunded' });
    const end = await moneyState(userId, ids);
    expect({ balance: end.balance, ledger: end.ledger.at(-1), payment: end.payment }).toEqual({
      balance: 0,
      ledger: ['stripe:refund:{ch}', -50, 0],
      payment: { ...halfway.payment, status: 'refunded', amount_refunded_minor: 499, tokens_refunded: 100 },
    });
  });

  it('keeps shortfalls coherent: a spent pack disputed, half refunded, then reinstated gives nothing back and keeps the refund’s shortfall open', async () => {
    const userId = stripeId('user');
    const ids = { ...(await buyPack(userId, 499)), amount: 499 };
    await spend(userId, 70);
    expect((await withdraw(ids)).outcome_detail).toContain('took back 30 of 100 tokens owed');
    await refund(ids, 250);
    // The refund claims 50: the 30 the dispute took, and 20 of its shortfall. The other 50 of
    // the dispute's shortfall is forgiven; nothing is given back.
    expect((await reinstate(ids)).outcome_detail).toContain('gave back 0 of 30 tokens taken');
    expect(await moneyState(userId, ids)).toEqual({
      balance: 0,
      ledger: [
        ['stripe:payment:{pi}', 100, 100],
        ['spend', -70, 30],
        ['stripe:dispute:{dp}', -30, 0],
      ],
      payment: {
        status: 'partially_refunded',
        amount_minor: 499,
        amount_refunded_minor: 250,
        tokens_granted: 100,
        tokens_refunded: 30,
        refund_shortfall: 20,
      },
      dispute: { tokens_owed: 100, tokens_taken: 30, shortfall: 70, tokens_reinstated: 0 },
      shortfalls: [{ source: 'stripe_dispute', shortfall: 20, recovered: 0, closed: false }],
    });
  });

  it('leaves a refunded annual invoice’s installments void when its dispute is then won, and gives nothing back', async () => {
    const userId = stripeId('user');
    const { invoiceId } = await subscribeAnnualAndPayFirstInvoice(stack, fake, userId);
    const paymentIntent = stripeId('pi');
    fake.putInvoicePayment({ invoice: invoiceId, paymentIntent, amountPaid: 9990 });
    await sql`UPDATE stripe_installments SET due_at = now() - interval '1 minute'
              WHERE invoice_id = ${invoiceId} AND sequence = 1`.execute(stack.db);
    await grantDueInstallments(stack.outboxDeps(), { batchSize: 50, processingStaleAfterMs: 60_000, maxAttempts: 5 });
    const ids = { paymentIntent, charge: stripeId('ch'), disputeId: stripeId('dp'), amount: 9990 };
    expect((await withdraw(ids)).outcome_detail).toContain('took back 200 of 200 tokens owed');
    expect((await refund(ids, 9990)).outcome_code).toBe('refunded');
    const reinstated = await reinstate(ids);
    expect(reinstated.outcome_detail).toContain('gave back 0 of 200 tokens taken');
    expect(reinstated.outcome_detail).not.toContain('scheduled again');
    // A year passes: nothing is left to grant.
    await sql`UPDATE stripe_installments SET due_at = now() - interval '1 minute' WHERE invoice_id = ${invoiceId}`.execute(
      stack.db,
    );
    await grantDueInstallments(stack.outboxDeps(), { batchSize: 50, processingStaleAfterMs: 60_000, maxAttempts: 5 });
    const state = await stripeStateOf(stack.db, userId);
    expect({
      balance: state.balance,
      ledger: state.ledger.map((row) => [row.reference.replace(/^stripe:installment:\d+$/, 'installment'), row.amount]),
      payments: state.payments.map((row) => [
        row.status,
        row.tokens_granted,
        row.tokens_refunded,
        row.refund_shortfall,
      ]),
      installments: state.installments.map((row) => [row.tokens, row.status]),
    }).toEqual({
      balance: 0,
      ledger: [
        [`stripe:invoice:${invoiceId}`, 100],
        ['installment', 100],
        [`stripe:dispute:${ids.disputeId}`, -200],
      ],
      payments: [['refunded', 100, 200, 0]],
      installments: [[100, 'granted'], ...Array.from({ length: 10 }, () => [100, 'void'])],
    });
  });
});
