import { grantDueInstallments } from '@tally/billing-core';
import { sql } from 'kysely';
import { eventually, readJson, signStripe } from '../../support/stack';
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
 * Chargebacks (`charge.dispute.funds_withdrawn` / `funds_reinstated`) and refunds of subscription
 * invoices, through the real ingest (signed for real), the worker and the fake Stripe API over
 * HTTP, which answers `GET /v1/disputes/{id}` with the dispute as it stands.
 */
describe('Stripe chargebacks and subscription invoice refunds', () => {
  const { stack, fake } = suiteStackWithFakeStripe({ worker: { retryLater: quickRetryLater } });

  const post = (body: string) => stack.deliverStripe(body);
  const finished = (eventId: string) => stack.finishedInboxRow('stripe', eventId);
  const spend = (userId: string, tokens: number) =>
    stack.postPlainEntry({ userId, reference: `test:spend:${stripeId('s')}`, amount: -tokens, reason: 'test_spend' });
  const disputeRow = (disputeId: string) =>
    stack.db
      .selectFrom('stripe_disputes')
      .select(['status', 'tokens_owed', 'tokens_taken', 'shortfall', 'tokens_reinstated'])
      .where('dispute_id', '=', disputeId)
      .executeTakeFirst();
  const ledgerOf = async (userId: string) =>
    (await stripeStateOf(stack.db, userId)).ledger.map((row) => [row.reference, row.amount, row.balance_after]);

  /** A 100-token pack paid by a new intent, credited; returns its ids. */
  async function buyPack(userId: string) {
    const paymentIntent = stripeId('pi');
    const charge = stripeId('ch');
    const row = await finished(
      await post(
        stripeEventBody(
          'payment_intent.succeeded',
          stripePackIntent({ id: paymentIntent, userId, customer: stripeId('cus') }),
        ),
      ),
    );
    expect(row.outcome_code).toBe('credited');
    return { paymentIntent, charge };
  }

  /** Delivers a dispute event twice (a redelivery has a new event id only when Stripe resends; here the same). */
  async function deliverTwice(type: string, dispute: Record<string, unknown>) {
    const body = stripeEventBody(type, dispute);
    const eventId = await post(body);
    const first = await finished(eventId);
    const again = await stack.postStripe(body, signStripe(body));
    expect(((await again.json()) as { status: string }).status).toBe('duplicate');
    // A second event of the same type and dispute (Stripe resends with a new id after a lost answer).
    const second = await finished(await post(stripeEventBody(type, dispute)));
    return { first, second };
  }

  it('takes a chargebacked pack back once and gives it back once when the dispute is won, each event delivered twice', async () => {
    const userId = stripeId('user');
    const { paymentIntent, charge } = await buyPack(userId);
    const disputeId = stripeId('dp');
    const withdrawnDispute = stripeDispute({ id: disputeId, charge, paymentIntent, withdrawn: true });
    fake.putDispute(withdrawnDispute);
    const withdrawn = await deliverTwice('charge.dispute.funds_withdrawn', withdrawnDispute);
    expect([withdrawn.first.outcome_code, withdrawn.second.outcome_code]).toEqual([
      'dispute_funds_withdrawn',
      'dispute_already_applied',
    ]);
    expect((await stripeStateOf(stack.db, userId)).balance).toBe(0);

    const won = stripeDispute({ id: disputeId, charge, paymentIntent, reinstated: true });
    fake.putDispute(won);
    const reinstated = await deliverTwice('charge.dispute.funds_reinstated', won);
    expect([reinstated.first.outcome_code, reinstated.second.outcome_code]).toEqual([
      'dispute_funds_reinstated',
      'dispute_already_applied',
    ]);

    const state = await stripeStateOf(stack.db, userId);
    expect(state.balance).toBe(100);
    expect(state.ledger.map((row) => [row.reference, row.amount, row.balance_after, row.reason])).toEqual([
      [`stripe:payment:${paymentIntent}`, 100, 100, 'token_pack_purchase'],
      [`stripe:dispute:${disputeId}`, -100, 0, 'stripe_dispute'],
      [`stripe:dispute:${disputeId}:reinstated`, 100, 100, 'stripe_dispute_reinstated'],
    ]);
    expect(state.payments).toEqual([
      expect.objectContaining({ provider_payment_id: paymentIntent, tokens_refunded: 0, refund_shortfall: 0 }),
    ]);
    expect(await disputeRow(disputeId)).toEqual({
      status: 'won',
      tokens_owed: 100,
      tokens_taken: 100,
      shortfall: 0,
      tokens_reinstated: 100,
    });
  });

  it('reaches the same state when the reinstatement is delivered before the withdrawal', async () => {
    const userId = stripeId('user');
    const { paymentIntent, charge } = await buyPack(userId);
    const disputeId = stripeId('dp');
    // By the time either event is processed, Stripe has withdrawn and reinstated the funds.
    fake.putDispute(stripeDispute({ id: disputeId, charge, paymentIntent, reinstated: true }));
    const reinstated = await finished(
      await post(
        stripeEventBody(
          'charge.dispute.funds_reinstated',
          stripeDispute({ id: disputeId, charge, paymentIntent, reinstated: true }),
        ),
      ),
    );
    expect(reinstated.outcome_code).toBe('dispute_funds_reinstated');
    const withdrawn = await finished(
      await post(
        stripeEventBody(
          'charge.dispute.funds_withdrawn',
          stripeDispute({ id: disputeId, charge, paymentIntent, withdrawn: true }),
        ),
      ),
    );
    expect(withdrawn.outcome_code).toBe('dispute_already_applied');
    expect(await ledgerOf(userId)).toEqual([
      [`stripe:payment:${paymentIntent}`, 100, 100],
      [`stripe:dispute:${disputeId}`, -100, 0],
      [`stripe:dispute:${disputeId}:reinstated`, 100, 100],
    ]);
    expect(await disputeRow(disputeId)).toMatchObject({ tokens_taken: 100, tokens_reinstated: 100 });
  });

  it('takes only what is left of a spent pack, records the shortfall for support, and reinstates only what it took', async () => {
    const userId = stripeId('user');
    const { paymentIntent, charge } = await buyPack(userId);
    await spend(userId, 70);
    const disputeId = stripeId('dp');
    fake.putDispute(stripeDispute({ id: disputeId, charge, paymentIntent, withdrawn: true }));
    const withdrawn = await finished(
      await post(
        stripeEventBody(
          'charge.dispute.funds_withdrawn',
          stripeDispute({ id: disputeId, charge, paymentIntent, withdrawn: true }),
        ),
      ),
    );
    expect(withdrawn.outcome_detail).toContain('took back 30 of 100 tokens owed');
    expect(withdrawn.outcome_detail).toContain('shortfall 70');
    expect((await stripeStateOf(stack.db, userId)).payments).toEqual([
      expect.objectContaining({ tokens_refunded: 30, refund_shortfall: 70 }),
    ]);
    const support = (await readJson(await stack.apiRequest(`/admin/users/${userId}`))) as { disputes: unknown[] };
    expect(support.disputes).toEqual([
      expect.objectContaining({
        disputeId,
        providerPaymentId: paymentIntent,
        status: 'needs_response',
        tokensOwed: 100,
        tokensTaken: 30,
        shortfall: 70,
        tokensReinstated: 0,
        ledgerReference: `stripe:dispute:${disputeId}`,
      }),
    ]);

    fake.putDispute(stripeDispute({ id: disputeId, charge, paymentIntent, reinstated: true }));
    await finished(
      await post(
        stripeEventBody(
          'charge.dispute.funds_reinstated',
          stripeDispute({ id: disputeId, charge, paymentIntent, reinstated: true }),
        ),
      ),
    );
    const state = await stripeStateOf(stack.db, userId);
    expect(state.balance).toBe(30);
    expect(
      state.ledger.map((row) => [row.reference.replace(/^test:spend:.*/, 'spend'), row.amount, row.balance_after]),
    ).toEqual([
      [`stripe:payment:${paymentIntent}`, 100, 100],
      ['spend', -70, 30],
      [`stripe:dispute:${disputeId}`, -30, 0],
      [`stripe:dispute:${disputeId}:reinstated`, 30, 30],
    ]);
    expect(state.payments).toEqual([expect.objectContaining({ tokens_refunded: 0, refund_shortfall: 0 })]);
    expect(await disputeRow(disputeId)).toEqual({
      status: 'won',
      tokens_owed: 100,
      tokens_taken: 30,
      shortfall: 70,
      tokens_reinstated: 30,
    });
  });

  it('moves no money on charge.dispute.created, updated and closed', async () => {
    const userId = stripeId('user');
    const { paymentIntent, charge } = await buyPack(userId);
    const disputeId = stripeId('dp');
    const dispute = stripeDispute({ id: disputeId, charge, paymentIntent, status: 'lost', withdrawn: true });
    fake.putDispute(dispute);
    for (const type of ['charge.dispute.created', 'charge.dispute.updated', 'charge.dispute.closed']) {
      expect(await finished(await post(stripeEventBody(type, dispute)))).toMatchObject({
        status: 'ignored',
        outcome_code: 'dispute_no_funds_movement',
      });
    }
    expect(await ledgerOf(userId)).toEqual([[`stripe:payment:${paymentIntent}`, 100, 100]]);
    expect(await disputeRow(disputeId)).toBeUndefined();
    expect(fake.requests.filter((request) => request.path === `/v1/disputes/${disputeId}`)).toEqual([]);
  });

  it('waits for the payment when a chargeback arrives before it, then takes it back', async () => {
    const userId = stripeId('user');
    const paymentIntent = stripeId('pi');
    const charge = stripeId('ch');
    const disputeId = stripeId('dp');
    fake.putDispute(stripeDispute({ id: disputeId, charge, paymentIntent, withdrawn: true }));
    const disputeEvent = await post(
      stripeEventBody(
        'charge.dispute.funds_withdrawn',
        stripeDispute({ id: disputeId, charge, paymentIntent, withdrawn: true }),
      ),
    );
    await eventually('the chargeback to wait', async () => {
      const [row] = await stack.inboxRows('stripe', disputeEvent);
      return row && row.deferrals >= 1;
    });
    await finished(
      await post(
        stripeEventBody(
          'payment_intent.succeeded',
          stripePackIntent({ id: paymentIntent, userId, customer: stripeId('cus') }),
        ),
      ),
    );
    expect((await finished(disputeEvent)).outcome_code).toBe('dispute_funds_withdrawn');
    expect(await ledgerOf(userId)).toEqual([
      [`stripe:payment:${paymentIntent}`, 100, 100],
      [`stripe:dispute:${disputeId}`, -100, 0],
    ]);
  });

  /** An annual subscription whose first invoice is paid (100 tokens, 11 installments scheduled) and whose first installment is granted. */
  async function annualWithOneInstallmentGranted(userId: string) {
    const { invoiceId } = await subscribeAnnualAndPayFirstInvoice(stack, fake, userId);
    const paymentIntent = stripeId('pi');
    fake.putInvoicePayment({ invoice: invoiceId, paymentIntent, amountPaid: 9990 });
    await sql`UPDATE stripe_installments SET due_at = now() - interval '1 minute'
              WHERE invoice_id = ${invoiceId} AND sequence = 1`.execute(stack.db);
    // The loop is global: other tests' due rows may be granted in the same pass.
    await grantDueInstallments(stack.outboxDeps(), { batchSize: 50, processingStaleAfterMs: 60_000, maxAttempts: 5 });
    expect((await stripeStateOf(stack.db, userId)).balance).toBe(200);
    return { invoiceId, paymentIntent };
  }
  const installmentStatuses = async (userId: string) =>
    (await stripeStateOf(stack.db, userId)).installments.map((row) => row.status);

  it('takes back a fully refunded annual invoice with its granted installments and voids the scheduled ones, which the loop then never grants', async () => {
    const userId = stripeId('user');
    const { invoiceId, paymentIntent } = await annualWithOneInstallmentGranted(userId);
    const charge = stripeId('ch');
    // Installment 2 was claimed by a loop that has not granted it yet: the refund voids it too.
    await sql`UPDATE stripe_installments SET status = 'processing', attempts = 1, updated_at = now() - interval '1 hour'
              WHERE invoice_id = ${invoiceId} AND sequence = 2`.execute(stack.db);
    const refund = await finished(
      await post(stripeEventBody('charge.refunded', stripeRefundedCharge({ id: charge, paymentIntent, amount: 9990 }))),
    );
    expect(refund).toMatchObject({ status: 'processed', outcome_code: 'refunded' });
    expect(refund.outcome_detail).toContain('10 installments voided');
    // Every remaining installment falls due; the loop finds none to grant.
    await sql`UPDATE stripe_installments SET due_at = now() - interval '1 minute' WHERE invoice_id = ${invoiceId}`.execute(
      stack.db,
    );
    expect(
      await grantDueInstallments(stack.outboxDeps(), { batchSize: 50, processingStaleAfterMs: 0, maxAttempts: 5 }),
    ).toEqual({
      claimed: 0,
      granted: 0,
      alreadyGranted: 0,
      failed: 0,
    });
    const state = await stripeStateOf(stack.db, userId);
    expect(state.balance).toBe(0);
    expect(state.ledger.map((row) => [row.reference.replace(/:\d+$/, ':n'), row.amount])).toEqual([
      [`stripe:invoice:${invoiceId}`, 100],
      ['stripe:installment:n', 100],
      [`stripe:refund:${charge}`, -200],
    ]);
    expect(state.installments.map((row) => row.status)).toEqual([
      'granted',
      ...Array.from({ length: 10 }, () => 'void'),
    ]);
    expect(state.payments).toEqual([
      expect.objectContaining({
        provider_payment_id: invoiceId,
        status: 'refunded',
        tokens_refunded: 200,
        refund_shortfall: 0,
      }),
    ]);
  });

  it('takes back a partly refunded annual invoice in proportion and keeps its installments scheduled at the half not refunded', async () => {
    const userId = stripeId('user');
    const { paymentIntent } = await annualWithOneInstallmentGranted(userId);
    const charge = stripeId('ch');
    const refund = await finished(
      await post(
        stripeEventBody(
          'charge.refunded',
          stripeRefundedCharge({ id: charge, paymentIntent, amount: 9990, amountRefunded: 4995 }),
        ),
      ),
    );
    expect(refund.outcome_code).toBe('partially_refunded');
    // floor(200 granted × 4995 / 9990) = 100.
    expect(await ledgerOf(userId)).toEqual([
      expect.arrayContaining([100]),
      expect.arrayContaining([100]),
      [`stripe:refund:${charge}:4995`, -100, 100],
    ]);
    expect((await stripeStateOf(stack.db, userId)).installments.map((row) => [row.tokens, row.status])).toEqual([
      [100, 'granted'],
      ...Array.from({ length: 10 }, () => [50, 'scheduled']),
    ]);
  });

  it('takes back a chargebacked annual invoice with its granted installments, voids the scheduled ones, and schedules them again when the dispute is won', async () => {
    const userId = stripeId('user');
    const { invoiceId, paymentIntent } = await annualWithOneInstallmentGranted(userId);
    const charge = stripeId('ch');
    const disputeId = stripeId('dp');
    fake.putDispute(stripeDispute({ id: disputeId, charge, paymentIntent, amount: 9990, withdrawn: true }));
    const withdrawn = await finished(
      await post(
        stripeEventBody(
          'charge.dispute.funds_withdrawn',
          stripeDispute({ id: disputeId, charge, paymentIntent, amount: 9990, withdrawn: true }),
        ),
      ),
    );
    expect(withdrawn.outcome_detail).toContain('took back 200 of 200 tokens owed');
    expect(withdrawn.outcome_detail).toContain('10 installments voided');
    expect(await installmentStatuses(userId)).toEqual(['granted', ...Array.from({ length: 10 }, () => 'void')]);
    expect((await stripeStateOf(stack.db, userId)).balance).toBe(0);

    fake.putDispute(stripeDispute({ id: disputeId, charge, paymentIntent, amount: 9990, reinstated: true }));
    const reinstated = await finished(
      await post(
        stripeEventBody(
          'charge.dispute.funds_reinstated',
          stripeDispute({ id: disputeId, charge, paymentIntent, amount: 9990, reinstated: true }),
        ),
      ),
    );
    expect(reinstated.outcome_detail).toContain('10 installments scheduled again');
    const state = await stripeStateOf(stack.db, userId);
    expect(state.balance).toBe(200);
    expect(
      state.ledger.map((row) => [row.reference.replace(/^stripe:installment:\d+$/, 'installment'), row.amount]),
    ).toEqual([
      [`stripe:invoice:${invoiceId}`, 100],
      ['installment', 100],
      [`stripe:dispute:${disputeId}`, -200],
      [`stripe:dispute:${disputeId}:reinstated`, 200],
    ]);
    expect(state.installments.map((row) => row.status)).toEqual([
      'granted',
      ...Array.from({ length: 10 }, () => 'scheduled'),
    ]);
  });
});
