import { grantDueInstallments } from '@tally/billing-core';
import { sql } from 'kysely';
import { RunOnceAfter } from '../../support/run-once-after';
import { stripeDispute, stripeEventBody, stripeId, stripeRefundedCharge } from '../../support/stripe-events';
import { subscribeAnnualAndPayFirstInvoice } from '../../support/stripe-flows';
import { stripeStateOf } from '../../support/stripe-state';
import { quickRetryLater, suiteStackWithFakeStripe } from '../../support/suite';

/**
 * Issue 30, item 2: a partial refund of an annual invoice (9990, 1200 tokens: 100 with the invoice
 * and eleven installments of 100) left every installment still scheduled at its full share, so a
 * 99% refund in month 1 went on granting 1000 tokens. Each installment not granted is scaled to
 * floor(full share × (amount − refunded) / amount), always from its original share. Through the
 * real ingest, the worker, the installment loop and the fake Stripe over HTTP.
 */
describe('a partial refund of an annual invoice', () => {
  const { stack, fake } = suiteStackWithFakeStripe({ worker: { retryLater: quickRetryLater } });

  const loop = { batchSize: 50, processingStaleAfterMs: 60_000, maxAttempts: 5 };
  const deliver = async (type: string, object: Record<string, unknown>) =>
    stack.finishedInboxRow('stripe', await stack.deliverStripe(stripeEventBody(type, object)));
  const due = (invoiceId: string, sequences: number[]) =>
    sql`UPDATE stripe_installments SET due_at = now() - interval '1 minute'
        WHERE invoice_id = ${invoiceId} AND sequence = ANY(${sequences})`.execute(stack.db);
  const everySequence = Array.from({ length: 11 }, (_, i) => i + 1);

  /** An annual subscription paid (100 tokens), its charge's intent known to the fake, and installment 1 granted unless told. */
  async function annual(userId: string, options: { grantFirstInstallment: boolean } = { grantFirstInstallment: true }) {
    const { invoiceId } = await subscribeAnnualAndPayFirstInvoice(stack, fake, userId);
    const paymentIntent = stripeId('pi');
    fake.putInvoicePayment({ invoice: invoiceId, paymentIntent, amountPaid: 9990 });
    if (options.grantFirstInstallment) {
      await due(invoiceId, [1]);
      await grantDueInstallments(stack.outboxDeps(), loop);
      expect((await stripeStateOf(stack.db, userId)).balance).toBe(200);
    }
    return { invoiceId, paymentIntent, charge: stripeId('ch') };
  }
  type Annual = Awaited<ReturnType<typeof annual>>;
  const refund = (ids: Annual, amountRefunded: number) =>
    deliver(
      'charge.refunded',
      stripeRefundedCharge({ id: ids.charge, paymentIntent: ids.paymentIntent, amount: 9990, amountRefunded }),
    );

  async function stateOf(userId: string, ids: Annual) {
    const state = await stripeStateOf(stack.db, userId);
    const installments = await stack.db
      .selectFrom('stripe_installments')
      .select(['sequence', 'tokens', 'full_tokens', 'status'])
      .where('invoice_id', '=', ids.invoiceId)
      .orderBy('sequence')
      .execute();
    const [payment] = await stack.db
      .selectFrom('payments')
      .select(['status', 'amount_refunded_minor', 'tokens_granted', 'tokens_refunded', 'refund_shortfall'])
      .where('provider_payment_id', '=', ids.invoiceId)
      .execute();
    return {
      balance: state.balance,
      ledger: state.ledger.map((row) => [
        row.reference
          .replace(ids.invoiceId, '{in}')
          .replace(ids.charge, '{ch}')
          .replace(/^stripe:installment:\d+$/, 'installment'),
        row.amount,
        row.balance_after,
      ]),
      payment,
      installments: installments.map((row) => [row.sequence, row.tokens, row.full_tokens, row.status]),
    };
  }
  const installmentRows = (from: number, to: number, tokens: number, status: string) =>
    Array.from({ length: to - from + 1 }, (_, i) => [from + i, tokens, 100, status]);

  it('scales every installment still scheduled after a 99% refund in month 1, so the year grants 1 token each', async () => {
    const userId = stripeId('user');
    const ids = await annual(userId);
    const refunded = await refund(ids, 9890);
    expect(refunded.outcome_code).toBe('partially_refunded');
    expect(refunded.outcome_detail).toContain('10 installments scaled down');
    // The year passes.
    await due(ids.invoiceId, everySequence);
    await grantDueInstallments(stack.outboxDeps(), loop);
    expect(await stateOf(userId, ids)).toEqual({
      // floor(200 × 9890 / 9990) = 197 taken back; floor(100 × 100 / 9990) = 1 per installment.
      balance: 13,
      ledger: [
        ['stripe:invoice:{in}', 100, 100],
        ['installment', 100, 200],
        ['stripe:refund:{ch}:9890', -197, 3],
        ...Array.from({ length: 10 }, (_, i) => ['installment', 1, 4 + i]),
      ],
      payment: {
        status: 'partially_refunded',
        amount_refunded_minor: 9890,
        tokens_granted: 100,
        tokens_refunded: 197,
        refund_shortfall: 0,
      },
      installments: [[1, 100, 100, 'granted'], ...installmentRows(2, 11, 1, 'granted')],
    });
  });

  it('scales each partial refund from the original share (no compounded rounding) and counts scaled grants in later refunds', async () => {
    const userId = stripeId('user');
    const ids = await annual(userId);
    await refund(ids, 3330);
    // floor(100 × 6660 / 9990) = 66.
    expect((await stateOf(userId, ids)).installments).toEqual([
      [1, 100, 100, 'granted'],
      ...installmentRows(2, 11, 66, 'scheduled'),
    ]);
    await refund(ids, 4995);
    // floor(100 × 4995 / 9990) = 50, not floor(66 × 4995 / 6660) = 49.
    expect((await stateOf(userId, ids)).installments).toEqual([
      [1, 100, 100, 'granted'],
      ...installmentRows(2, 11, 50, 'scheduled'),
    ]);
    await due(ids.invoiceId, everySequence);
    await grantDueInstallments(stack.outboxDeps(), loop);
    // 80% refunded once all is granted: the user keeps 20% of the 1200 at full share, 240.
    await refund(ids, 7992);
    const at80 = await stateOf(userId, ids);
    expect({ balance: at80.balance, payment: at80.payment }).toEqual({
      balance: 240,
      payment: {
        status: 'partially_refunded',
        amount_refunded_minor: 7992,
        tokens_granted: 100,
        tokens_refunded: 460,
        refund_shortfall: 0,
      },
    });
    await refund(ids, 9990);
    expect(await stateOf(userId, ids)).toEqual({
      balance: 0,
      ledger: [
        ['stripe:invoice:{in}', 100, 100],
        ['installment', 100, 200],
        ['stripe:refund:{ch}:3330', -66, 134],
        ['stripe:refund:{ch}:4995', -34, 100],
        ...Array.from({ length: 10 }, (_, i) => ['installment', 50, 150 + 50 * i]),
        ['stripe:refund:{ch}:7992', -360, 240],
        ['stripe:refund:{ch}', -240, 0],
      ],
      payment: {
        status: 'refunded',
        amount_refunded_minor: 9990,
        tokens_granted: 100,
        tokens_refunded: 700,
        refund_shortfall: 0,
      },
      installments: [[1, 100, 100, 'granted'], ...installmentRows(2, 11, 50, 'granted')],
    });
  });

  it('grants an installment claimed before the refund at its scaled share, which the refund did not count', async () => {
    const userId = stripeId('user');
    const ids = await annual(userId, { grantFirstInstallment: false });
    await due(ids.invoiceId, [1]);
    let refunded: Awaited<ReturnType<typeof refund>> | undefined;
    // The loop has claimed installment 1 (processing, its claimed row says 100) when the refund runs.
    const db = stack.db.withPlugin(
      // Right after the loop's claim of installment 1 has committed (its row: processing).
      new RunOnceAfter({ row: (row) => row.invoice_id === ids.invoiceId && row.status === 'processing' }, async () => {
        refunded = await refund(ids, 4995);
      }),
    );
    const result = await grantDueInstallments({ ...stack.outboxDeps(), db }, loop);
    expect(result).toMatchObject({ granted: 1, failed: 0 });
    expect(refunded?.outcome_detail).toContain('took back 50 of 50 tokens owed (50 of 100 granted in all)');
    expect(refunded?.outcome_detail).toContain('11 installments scaled down');
    expect(await stateOf(userId, ids)).toEqual({
      balance: 100,
      ledger: [
        ['stripe:invoice:{in}', 100, 100],
        ['stripe:refund:{ch}:4995', -50, 50],
        ['installment', 50, 100],
      ],
      payment: {
        status: 'partially_refunded',
        amount_refunded_minor: 4995,
        tokens_granted: 100,
        tokens_refunded: 50,
        refund_shortfall: 0,
      },
      installments: [[1, 50, 100, 'granted'], ...installmentRows(2, 11, 50, 'scheduled')],
    });
  });

  it('schedules again at their scaled share the installments a dispute voided when it is won after a half refund', async () => {
    const userId = stripeId('user');
    const ids = await annual(userId);
    const disputeId = stripeId('dp');
    const dispute = { id: disputeId, charge: ids.charge, paymentIntent: ids.paymentIntent, amount: 9990 };
    fake.putDispute(stripeDispute({ ...dispute, withdrawn: true }));
    await deliver('charge.dispute.funds_withdrawn', stripeDispute({ ...dispute, withdrawn: true }));
    await refund(ids, 4995);
    fake.putDispute(stripeDispute({ ...dispute, reinstated: true }));
    const reinstated = await deliver(
      'charge.dispute.funds_reinstated',
      stripeDispute({ ...dispute, reinstated: true }),
    );
    expect(reinstated.outcome_detail).toContain('gave back 100 of 200 tokens taken');
    expect(reinstated.outcome_detail).toContain('10 installments scheduled again');
    await due(ids.invoiceId, everySequence);
    await grantDueInstallments(stack.outboxDeps(), loop);
    const disputed = await stateOf(userId, ids);
    expect({ balance: disputed.balance, installments: disputed.installments }).toEqual({
      balance: 600,
      installments: [[1, 100, 100, 'granted'], ...installmentRows(2, 11, 50, 'granted')],
    });

    // The same half refund with no dispute ends in the same state.
    const controlUser = stripeId('user');
    const control = await annual(controlUser);
    await refund(control, 4995);
    await due(control.invoiceId, everySequence);
    await grantDueInstallments(stack.outboxDeps(), loop);
    const undisputed = await stateOf(controlUser, control);
    expect({ balance: undisputed.balance, payment: undisputed.payment, installments: undisputed.installments }).toEqual(
      { balance: disputed.balance, payment: disputed.payment, installments: disputed.installments },
    );
  });
});
