import { claimStudioRequest, failStudioRequest, grantDueInstallments, verifyLedger } from '@tally/billing-core';
import { sql } from 'kysely';
import { drawsOf, lotsOf } from '../../support/ledger';
import { type Json, readJson } from '../../support/stack';
import {
  stripeDispute,
  stripeEventBody,
  stripeId,
  stripePackIntent,
  stripeRefundedCharge,
} from '../../support/stripe-events';
import { daysAhead, replayStripeEvents, subscribeUntil } from '../../support/stripe-flows';
import { suiteStackWithFakeStripe } from '../../support/suite';

/**
 * Credits that expire (docs/lots.md), end to end: signed webhooks through ingest and the real
 * worker create the lots, studio requests through the API draw from them, refunds take from and
 * give back to them, and the wallet answers them in the draw order.
 */
describe('credit lots through the real flows', () => {
  const { stack, fake } = suiteStackWithFakeStripe({ worker: { concurrency: 4 } });

  const deliver = async (body: string) => stack.finishedInboxRow('stripe', await stack.deliverStripe(body));
  const wallet = async (userId: string): Promise<Json> =>
    readJson(await stack.apiRequest(`/v1/users/${userId}/wallet`));
  const ledger = async (userId: string): Promise<Json[]> =>
    (await readJson(await stack.apiRequest(`/v1/users/${userId}/ledger?limit=100`))).entries;
  const lotRows = (userId: string) => lotsOf(stack.db, userId);
  const drawRows = (userId: string) => drawsOf(stack.db, userId);

  const subscribe = (userId: string, priceId: string, periodEnd: number) =>
    subscribeUntil(stack, fake, { userId, priceId, periodEnd });

  it('a period_end invoice lot expires at its line period end, a pack never; a studio debit draws the subscription lot first; a pack refund takes from its own lot; a failed generation gives back to the lots it drew, an expired one included; replaying every event changes nothing', async () => {
    const userId = stripeId('user');
    const periodEnd = daysAhead(30);
    const { invoiceId, bodies } = await subscribe(userId, 'price_premium_monthly_expiring', periodEnd);
    const paymentIntentId = stripeId('pi');
    const pack = stripeEventBody(
      'payment_intent.succeeded',
      stripePackIntent({ id: paymentIntentId, userId, customer: stripeId('cus') }),
    );
    expect(await deliver(pack)).toMatchObject({ status: 'processed', outcome_code: 'credited' });

    const expiresAt = new Date(periodEnd * 1000).toISOString();
    const subscriptionLot = {
      id: expect.any(Number),
      category: 'subscription',
      source: `stripe:invoice:${invoiceId}`,
      amount: 100,
      remaining: 100,
      held: 0,
      expiresAt,
      createdAt: expect.any(String),
    };
    const packLot = {
      id: expect.any(Number),
      category: 'purchased',
      source: `stripe:payment:${paymentIntentId}`,
      amount: 100,
      remaining: 100,
      held: 0,
      expiresAt: null,
      createdAt: expect.any(String),
    };
    expect(await wallet(userId)).toEqual({
      userId,
      balance: 200,
      held: 0,
      available: 200,
      debt: 0,
      lots: [subscriptionLot, packLot],
    });
    const [subId, packId] = (await wallet(userId)).lots.map((lot: Json) => lot.id);

    // Two full songs (15 each) after the free allowance: both from the expiring subscription lot.
    const spend = async (charged = 15) => {
      const response = await stack.apiRequest(`/v1/users/${userId}/studio/requests`, {
        method: 'POST',
        body: { kind: 'music', full: true, input: { prompt: 'lots' } },
      });
      const body = await readJson(response);
      expect({ status: response.status, charged: body.tokensCharged }).toEqual({ status: 202, charged });
      return body.id as string;
    };
    // The stack's workers run no studio role: the requests stay in flight, no generation runs.
    for (const free of [1, 2]) expect(free && (await spend(0))).toEqual(expect.any(String)); // the free allowance
    const first = await spend();
    const second = await spend();
    expect(await wallet(userId)).toEqual({
      userId,
      balance: 170,
      held: 0,
      available: 170,
      debt: 0,
      lots: [{ ...subscriptionLot, remaining: 70 }, packLot],
    });

    // A refund of the pack takes its 100 from the pack's own lot, not in the draw order.
    const chargeId = stripeId('ch');
    const refund = stripeEventBody(
      'charge.refunded',
      stripeRefundedCharge({ id: chargeId, paymentIntent: paymentIntentId }),
    );
    expect(await deliver(refund)).toMatchObject({ status: 'processed', outcome_code: 'refunded' });
    expect(await wallet(userId)).toEqual({
      userId,
      balance: 70,
      held: 0,
      available: 70,
      debt: 0,
      lots: [{ ...subscriptionLot, remaining: 70 }],
    });

    // The first generation fails after its lot expired: its 15 return to that lot, expiry unchanged.
    const expired = new Date(Date.now() - 1_000);
    await stack.db.updateTable('credit_lots').set({ expires_at: expired }).where('id', '=', subId).execute();
    const request = await stack.db
      .selectFrom('studio_requests')
      .select(['id', 'public_id'])
      .where('public_id', '=', first)
      .executeTakeFirstOrThrow();
    // The test plays the studio worker: the generation is claimed and fails (which refunds it).
    expect(await claimStudioRequest(stack.db, request.id)).toMatchObject({ status: 'processing' });
    await failStudioRequest(stack.outboxDeps(), request.id, { code: 'ai_failed', message: 'boom' });
    const lotsAfter = [
      {
        id: subId,
        category: 'subscription',
        source: `stripe:invoice:${invoiceId}`,
        amount: 100,
        remaining: 85,
        expires_at: expired,
      },
      {
        id: packId,
        category: 'purchased',
        source: `stripe:payment:${paymentIntentId}`,
        amount: 100,
        remaining: 0,
        expires_at: null,
      },
    ];
    expect(await lotRows(userId)).toEqual(lotsAfter);
    const drawsAfter = [
      { reference: `studio:${first}:debit`, lot_id: subId, amount: 15 },
      { reference: `studio:${second}:debit`, lot_id: subId, amount: 15 },
      { reference: `stripe:refund:${chargeId}`, lot_id: packId, amount: 100 },
      { reference: `studio:${first}:refund`, lot_id: subId, amount: 15 },
    ];
    expect(await drawRows(userId)).toEqual(drawsAfter);
    // The ledger answer: each debit (and the give-back) lists its draws.
    const entries = await ledger(userId);
    expect(entries.map((entry) => [entry.amount, entry.draws])).toEqual([
      [15, [{ lotId: subId, amount: 15 }]],
      [-100, [{ lotId: packId, amount: 100 }]],
      [-15, [{ lotId: subId, amount: 15 }]],
      [-15, [{ lotId: subId, amount: 15 }]],
      [100, undefined],
      [100, undefined],
    ]);
    expect(await verifyLedger(stack.db)).toMatchObject({ ok: true, discrepancies: [] });

    // Replaying every event of the user changes nothing: lots, draws, balance.
    const before = { lots: await lotRows(userId), draws: await drawRows(userId), wallet: await wallet(userId) };
    await replayStripeEvents(stack, [...bodies, pack, refund]);
    expect({ lots: await lotRows(userId), draws: await drawRows(userId), wallet: await wallet(userId) }).toEqual(
      before,
    );
    expect(before.wallet.balance).toBe(85);
  });

  it("a chargeback takes from the disputed pack's lot first, and a won dispute gives back to that lot", async () => {
    const userId = stripeId('user');
    const { invoiceId } = await subscribe(userId, 'price_premium_monthly_expiring', daysAhead(30));
    const paymentIntent = stripeId('pi');
    const charge = stripeId('ch');
    const pack = stripeEventBody(
      'payment_intent.succeeded',
      stripePackIntent({ id: paymentIntent, userId, customer: stripeId('cus') }),
    );
    expect(await deliver(pack)).toMatchObject({ outcome_code: 'credited' });
    const disputeId = stripeId('dp');
    const withdrawn = stripeDispute({ id: disputeId, charge, paymentIntent, withdrawn: true });
    fake.putDispute(withdrawn);
    expect(await deliver(stripeEventBody('charge.dispute.funds_withdrawn', withdrawn))).toMatchObject({
      outcome_code: 'dispute_funds_withdrawn',
    });
    const remainingBySource = async () => (await lotRows(userId)).map((lot) => [lot.source, lot.remaining] as const);
    // The subscription lot comes first in the draw order, but the take-back takes the pack's own lot.
    expect(await remainingBySource()).toEqual([
      [`stripe:invoice:${invoiceId}`, 100],
      [`stripe:payment:${paymentIntent}`, 0],
    ]);
    const won = stripeDispute({ id: disputeId, charge, paymentIntent, reinstated: true });
    fake.putDispute(won);
    expect(await deliver(stripeEventBody('charge.dispute.funds_reinstated', won))).toMatchObject({
      outcome_code: 'dispute_funds_reinstated',
    });
    expect(await remainingBySource()).toEqual([
      [`stripe:invoice:${invoiceId}`, 100],
      [`stripe:payment:${paymentIntent}`, 100],
    ]);
    const [, packLot] = await lotRows(userId);
    expect((await drawRows(userId)).map((row) => [row.reference, row.lot_id, row.amount])).toEqual([
      [`stripe:dispute:${disputeId}`, packLot?.id, 100],
      [`stripe:dispute:${disputeId}:reinstated`, packLot?.id, 100],
    ]);
    expect(await verifyLedger(stack.db)).toMatchObject({ ok: true, discrepancies: [] });
  });

  it("an annual plan's monthly grants each expire when the next is due, the last a month after its own", async () => {
    const userId = stripeId('user');
    const { invoiceId } = await subscribe(userId, 'price_premium_annual_expiring', daysAhead(365));
    const installments = await stack.db
      .selectFrom('stripe_installments')
      .select(['id', 'sequence', 'due_at', 'lot_expires_at'])
      .where('invoice_id', '=', invoiceId)
      .orderBy('sequence')
      .execute();
    expect(installments).toHaveLength(11);
    // The first twelfth's lot expires when installment 1 is due; installment n's when n + 1 is.
    const [firstLot] = await lotRows(userId);
    expect(firstLot).toMatchObject({ category: 'subscription', amount: 100, expires_at: installments[0]?.due_at });
    for (const [i, row] of installments.entries()) {
      const next = installments[i + 1];
      if (next) expect(row.lot_expires_at).toEqual(next.due_at);
    }
    const last = installments[10];
    const lastExpiry = await sql<{ at: Date }>`SELECT ${last?.due_at}::timestamptz + interval '1 month' AS at`.execute(
      stack.db,
    );
    expect(last?.lot_expires_at).toEqual(lastExpiry.rows[0]?.at);

    // Granting the first two (made due now) creates their lots with those expiries.
    await sql`UPDATE stripe_installments SET due_at = now() - interval '1 minute'
               WHERE invoice_id = ${invoiceId} AND sequence <= 2`.execute(stack.db);
    await grantDueInstallments(stack.outboxDeps(), { batchSize: 50, processingStaleAfterMs: 60_000, maxAttempts: 5 });
    expect((await lotRows(userId)).map((lot) => [lot.source, lot.category, lot.amount, lot.expires_at])).toEqual([
      [`stripe:invoice:${invoiceId}`, 'subscription', 100, installments[0]?.due_at],
      [`stripe:installment:${installments[0]?.id}`, 'subscription', 100, installments[0]?.lot_expires_at],
      [`stripe:installment:${installments[1]?.id}`, 'subscription', 100, installments[1]?.lot_expires_at],
    ]);
    expect(await verifyLedger(stack.db)).toMatchObject({ ok: true, discrepancies: [] });
  });
});
