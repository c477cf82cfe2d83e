import { grantDueInstallments, verifyLedger } from '@tally/billing-core';
import { sql } from 'kysely';
import { auditOf } from '../../support/audit';
import { runCli } from '../../support/built-process';
import { revenueCatTokenPackRefund, revenueCatTokenPurchase } from '../../support/events';
import type { FakeStripe } from '../../support/fakes/fake-stripe';
import { basicAuth } from '../../support/parked-events';
import { answerOf, postAnswer } from '../../support/requests';
import { adminKey, type Json, readJson, startStackWithFakeStripe, type TestStack } from '../../support/stack';
import {
  stripeDispute,
  stripeEventBody,
  stripeId,
  stripePackIntent,
  stripeRefundedCharge,
} from '../../support/stripe-events';
import { subscribeAnnualAndPayFirstInvoice } from '../../support/stripe-flows';

/**
 * Debt (product spec "Debt: money owed is kept, not forgotten"; docs/debt.md): a pack refunded or
 * charged back after it was spent leaves what could not be taken as the wallet's `debt`, and the
 * next paid credit settles it first, once, in its own transaction. Through signed webhooks, the
 * worker and the api, against real Postgres and Redis.
 */
describe('debt', () => {
  let stack: TestStack;
  let fake: FakeStripe;
  beforeAll(async () => {
    ({ stack, fake } = await startStackWithFakeStripe());
    stack.startWorker();
  });
  afterAll(() => stack.stop());

  const wallet = async (userId: string) =>
    (await readJson(await stack.apiRequest(`/v1/users/${userId}/wallet`))) as Json;
  const entries = (userId: string) =>
    stack.db
      .selectFrom('ledger_entries')
      .select(['reference', 'amount', 'reason', 'balance_after'])
      .where('user_id', '=', userId)
      .orderBy('id')
      .execute();
  /** The wallet.debt_changed messages of the user, in order. */
  const debtMessages = async (userId: string) =>
    (
      await stack.db
        .selectFrom('app_webhook_messages')
        .select('data')
        .where('user_id', '=', userId)
        .where('type', '=', 'wallet.debt_changed')
        .orderBy('id')
        .execute()
    ).map((row) => row.data as Json);
  const deliver = async (type: string, object: Record<string, unknown>) =>
    stack.finishedInboxRow('stripe', await stack.deliverStripe(stripeEventBody(type, object)));

  /** A pack of 100 paid; returns its payment intent and charge ids. */
  async function payPack(userId: string) {
    const ids = { paymentIntent: stripeId('pi'), charge: stripeId('ch') };
    const row = await deliver(
      'payment_intent.succeeded',
      stripePackIntent({ id: ids.paymentIntent, userId, customer: stripeId('cus') }),
    );
    expect(row).toMatchObject({ outcome_code: 'credited' });
    return ids;
  }

  /** A pack paid, 80 of it spent, then refunded in full: 20 taken back, 80 owed. */
  async function spentAndRefunded(userId: string) {
    const first = await payPack(userId);
    expect(
      (await postAnswer(stack, `/v1/users/${userId}/debits`, { amount: 80, reference: `spent-${userId}` })).status,
    ).toBe(201);
    const refunded = await deliver(
      'charge.refunded',
      stripeRefundedCharge({ id: first.charge, paymentIntent: first.paymentIntent, amount: 499, amountRefunded: 499 }),
    );
    expect(refunded).toMatchObject({ status: 'processed' });
    expect(await wallet(userId)).toMatchObject({ balance: 0, available: 0, debt: 80 });
    return first;
  }

  it('a pack refunded after it was spent leaves debt, and the next pack settles it first, once', async () => {
    const userId = `debt_${stripeId('u')}`;
    const first = await spentAndRefunded(userId);
    // Support sees what made it (the support view and the console's user page).
    const before = (await readJson(await stack.apiRequest(`/admin/users/${userId}`))) as Json;
    expect(before.wallet).toMatchObject({
      debt: 80,
      debts: [{ source: 'stripe_refund', takeBackReference: `stripe:refund:${first.charge}`, owed: 80, settled: 0 }],
    });
    const second = await payPack(userId);
    const after = (await readJson(await stack.apiRequest(`/admin/users/${userId}`))) as Json;
    expect(after.wallet).toMatchObject({ debt: 0, debts: [{ owed: 80, settled: 80, closedAt: null }] });
    const consolePage = await fetch(`http://127.0.0.1:${stack.api.port}/admin/console/users/${userId}`, {
      headers: { authorization: basicAuth('support', adminKey) },
    });
    const page = await consolePage.text();
    // And the CLI's tally user.
    const cli = await runCli(['user', userId], { DATABASE_URL: stack.database.url });
    expect(cli.stdout).toContain('debt 0;');
    expect(cli.stdout).toMatch(new RegExp(`stripe_refund .*stripe:refund:${first.charge} +80 +80 +0`));
    expect(page).toContain('id="debt">0<');
    expect(page).toContain(`stripe:refund:${first.charge}`);
    expect(await wallet(userId)).toMatchObject({ balance: 20, debt: 0 });
    const settled = (await entries(userId)).filter((e) => e.reason === 'debt_settled');
    expect(settled).toEqual([
      {
        reference: `debt:stripe:payment:${second.paymentIntent}:settled`,
        amount: -80,
        reason: 'debt_settled',
        balance_after: 20,
      },
    ]);
    // The settlement came out of the new pack's lot, which the wallet shows with 20 left.
    expect((await wallet(userId)).lots).toEqual([expect.objectContaining({ amount: 100, remaining: 20 })]);
    // The refund's records moved with it: the payment gave back all it granted.
    const payment = await stack.db
      .selectFrom('payments')
      .select(['tokens_refunded', 'refund_shortfall'])
      .where('user_id', '=', userId)
      .orderBy('id')
      .executeTakeFirstOrThrow();
    expect(payment).toEqual({ tokens_refunded: 100, refund_shortfall: 0 });
    // A replay of the second pack settles nothing more.
    const replay = await deliver(
      'payment_intent.succeeded',
      stripePackIntent({ id: second.paymentIntent, userId, customer: stripeId('cus') }),
    );
    expect(replay).toMatchObject({ status: 'processed' });
    expect(await wallet(userId)).toMatchObject({ balance: 20, debt: 0 });
    // The app was told each change, in its transaction: what made the debt, what settled it.
    expect(await debtMessages(userId)).toEqual([
      { userId, debt: 80, change: 80, reason: 'stripe_refund', reference: `stripe:refund:${first.charge}` },
      {
        userId,
        debt: 0,
        change: -80,
        reason: 'debt_settled',
        reference: `debt:stripe:payment:${second.paymentIntent}:settled`,
      },
    ]);
    expect((await verifyLedger(stack.db)).ok).toBe(true);
  });

  it('ledger verify explains every unit of debt: a wallet debt or a settlement nothing backs is reported', async () => {
    const userId = `debt_${stripeId('u')}`;
    await spentAndRefunded(userId);
    await payPack(userId);
    const mine = async () => (await verifyLedger(stack.db)).discrepancies.filter((d) => d.userId === userId);
    expect(await mine()).toEqual([]);
    // Debt the sources do not owe (written past the trigger, as a bad repair would).
    await sql`UPDATE wallets SET debt = debt + 5 WHERE user_id = ${userId}`.execute(stack.db);
    expect(await mine()).toEqual([
      { userId, problem: 'debt_differs_from_sources', detail: 'wallet owes 5, its sources still owe 0' },
    ]);
    await sql`UPDATE wallets SET debt = debt - 5 WHERE user_id = ${userId}`.execute(stack.db);
    // A source marked settled by tokens no ledger entry took.
    await sql`UPDATE take_back_shortfalls SET recovered = recovered - 10 WHERE user_id = ${userId}`.execute(stack.db);
    expect(await mine()).toEqual([
      {
        userId,
        problem: 'debt_settlements_differ_from_entries',
        detail: "its sources were settled by 70, the ledger's settling entries take 80",
      },
    ]);
    await sql`UPDATE take_back_shortfalls SET recovered = recovered + 10 WHERE user_id = ${userId}`.execute(stack.db);
    expect(await mine()).toEqual([]);
  });

  it('each paid credit settles debt first, once: a top-up, a subscription period, an installment, a RevenueCat pack', async () => {
    const userId = `debt_${stripeId('u')}`;
    // A priced capture past what the wallet holds: 2 tokens, a 1-second video held, 500 seconds used.
    expect(
      (await postAnswer(stack, `/v1/users/${userId}/grants`, { amount: 2, reference: `seed-${userId}` })).status,
    ).toBe(201);
    const hold = await postAnswer(stack, `/v1/users/${userId}/holds`, {
      feature: 'video',
      quantity: 1,
      reference: `render-${userId}`,
    });
    expect(hold).toMatchObject({ status: 201, body: { amount: 2 } });
    const capture = await postAnswer(stack, `/v1/users/${userId}/holds/${hold.body.id}/capture`, { quantity: 500 });
    expect(capture).toMatchObject({ status: 200, body: { cost: 1000, captured: 2, excess: 0, debt: 998 } });
    expect(await wallet(userId)).toMatchObject({ balance: 0, debt: 998 });

    // A top-up, paid and confirmed; then its webhook replayed: settled once.
    const topup = await postAnswer(stack, `/v1/users/${userId}/topups`, { packId: 'tokens_100' });
    const [intent] = [...fake.paymentIntents.values()].filter(
      (candidate) => (candidate.metadata as Record<string, string>).topup_reference === topup.body.reference,
    );
    const paid = fake.setPaymentIntentStatus(String(intent?.id), 'succeeded');
    expect((await postAnswer(stack, `/v1/users/${userId}/topups/${topup.body.reference}/confirm`)).status).toBe(200);
    expect(await wallet(userId)).toMatchObject({ balance: 0, debt: 898 });
    expect(await deliver('payment_intent.succeeded', paid)).toMatchObject({ status: 'processed' });
    expect(await wallet(userId)).toMatchObject({ balance: 0, debt: 898 });

    // An annual subscription: its first period's twelfth, then an installment come due.
    const { subscriptionId } = await subscribeAnnualAndPayFirstInvoice(stack, fake, userId);
    expect(await wallet(userId)).toMatchObject({ balance: 0, debt: 798 });
    await sql`UPDATE stripe_installments SET due_at = now() - interval '1 minute'
              WHERE subscription_id = ${subscriptionId} AND sequence = 1`.execute(stack.db);
    await grantDueInstallments(stack.outboxDeps(), { batchSize: 50, processingStaleAfterMs: 60_000, maxAttempts: 5 });
    expect(await wallet(userId)).toMatchObject({ balance: 0, debt: 698 });

    // A RevenueCat pack.
    const purchase = revenueCatTokenPurchase({ id: `rc-${userId}`, userId });
    expect((await stack.postRevenueCat(purchase)).status).toBe(200);
    expect(await stack.finishedInboxRow('revenuecat', `rc-${userId}`)).toMatchObject({ outcome_code: 'credited' });
    expect(await wallet(userId)).toMatchObject({ balance: 0, debt: 598 });

    const settled = (await entries(userId)).filter((e) => e.reason === 'debt_settled');
    expect(settled.map((e) => [e.reference.split(':').slice(0, 3).join(':'), e.amount])).toEqual([
      ['debt:stripe:payment', -100], // the top-up's credit is its payment's
      ['debt:stripe:invoice', -100],
      ['debt:stripe:installment', -100],
      ['debt:revenuecat:event', -100],
    ]);
    expect((await verifyLedger(stack.db)).ok).toBe(true);
  });

  it('a RevenueCat pack refunded after it was spent leaves debt', async () => {
    const userId = `debt_${stripeId('u')}`;
    const purchase = revenueCatTokenPurchase({ id: `rc-buy-${userId}`, userId, transactionId: `tx-${userId}` });
    expect((await stack.postRevenueCat(purchase)).status).toBe(200);
    await stack.finishedInboxRow('revenuecat', `rc-buy-${userId}`);
    expect(
      (await postAnswer(stack, `/v1/users/${userId}/debits`, { amount: 60, reference: `spent-${userId}` })).status,
    ).toBe(201);
    const refund = revenueCatTokenPackRefund({ id: `rc-refund-${userId}`, userId, transactionId: `tx-${userId}` });
    expect((await stack.postRevenueCat(refund)).status).toBe(200);
    expect(await stack.finishedInboxRow('revenuecat', `rc-refund-${userId}`)).toMatchObject({ status: 'processed' });
    expect(await wallet(userId)).toMatchObject({ balance: 0, debt: 60 });
    expect((await debtMessages(userId)).map((m) => [m.reason, m.change, m.debt])).toEqual([
      ['revenuecat_refund', 60, 60],
    ]);
  });

  it('ten concurrent credits settle the debt exactly once between them', async () => {
    const userId = `debt_${stripeId('u')}`;
    await spentAndRefunded(userId);
    const grants = await Promise.all(
      Array.from({ length: 10 }, (_, i) =>
        stack
          .apiRequest(`/v1/users/${userId}/grants`, {
            method: 'POST',
            body: { amount: 30, reference: `settling-${userId}-${i}`, settlesDebt: true },
          })
          .then(answerOf),
      ),
    );
    expect(grants.map((g) => g.status)).toEqual(Array(10).fill(201));
    // 80 owed: the first three grants in lock order settle 30, 30 and 20; the rest settle nothing.
    expect(grants.map((g) => g.body.debtSettled).sort((a, b) => b - a)).toEqual([30, 30, 20, 0, 0, 0, 0, 0, 0, 0]);
    expect(await wallet(userId)).toMatchObject({ balance: 300 - 80, debt: 0 });
    const settled = (await entries(userId)).filter((e) => e.reason === 'debt_settled');
    expect(settled.reduce((sum, e) => sum + e.amount, 0)).toBe(-80);
  });

  it('ten packs paid at once settle the debt exactly once between them (the engine posts them in batches)', async () => {
    const userId = `debt_${stripeId('u')}`;
    await spentAndRefunded(userId);
    const intents = Array.from({ length: 10 }, () => stripeId('pi'));
    const eventIds = await Promise.all(
      intents.map((id) =>
        stack.deliverStripe(
          stripeEventBody('payment_intent.succeeded', stripePackIntent({ id, userId, customer: stripeId('cus') })),
        ),
      ),
    );
    for (const eventId of eventIds) {
      expect(await stack.finishedInboxRow('stripe', eventId)).toMatchObject({ outcome_code: 'credited' });
    }
    expect(await wallet(userId)).toMatchObject({ balance: 1000 - 80, debt: 0 });
    const settled = (await entries(userId)).filter((e) => e.reason === 'debt_settled');
    expect(settled).toEqual([expect.objectContaining({ amount: -80 })]);
    expect((await verifyLedger(stack.db)).ok).toBe(true);
  });

  it('a promotional grant settles nothing unless it says settlesDebt', async () => {
    const userId = `debt_${stripeId('u')}`;
    await spentAndRefunded(userId);
    const plain = await postAnswer(stack, `/v1/users/${userId}/grants`, { amount: 50, reference: `promo-${userId}` });
    expect(plain).toMatchObject({ status: 201, body: { balance: 50, debtSettled: 0 } });
    expect(await wallet(userId)).toMatchObject({ balance: 50, debt: 80 });
    const settling = await postAnswer(stack, `/v1/users/${userId}/grants`, {
      amount: 50,
      reference: `promo-settles-${userId}`,
      settlesDebt: true,
    });
    expect(settling).toMatchObject({ status: 201, body: { balance: 50, debtSettled: 50 } });
    expect(await wallet(userId)).toMatchObject({ balance: 50, debt: 30 });
    // Retried, the same grant answers the same and settles nothing more.
    const again = await postAnswer(stack, `/v1/users/${userId}/grants`, {
      amount: 50,
      reference: `promo-settles-${userId}`,
      settlesDebt: true,
    });
    expect(again).toMatchObject({ status: 200, body: { balance: 50, debtSettled: 50 } });
    expect(await wallet(userId)).toMatchObject({ balance: 50, debt: 30 });
  });

  it("support's forgive takes debt off the wallet, oldest first, audited with its note; no token moves", async () => {
    const userId = `debt_${stripeId('u')}`;
    await spentAndRefunded(userId);
    const forgive = (body: Json) => postAnswer(stack, `/admin/users/${userId}/debt/forgive`, body);
    expect((await forgive({ amount: 30 })).status).toBe(400); // the note is required
    expect(await forgive({ amount: 30, note: 'goodwill, ticket 12' })).toEqual({
      status: 200,
      body: { userId, forgiven: 30, debt: 50 },
    });
    expect(await wallet(userId)).toMatchObject({ balance: 0, debt: 50 });
    // All of the rest (more than is owed forgives what is owed).
    expect(await forgive({ amount: 500, note: 'closing the account' })).toEqual({
      status: 200,
      body: { userId, forgiven: 50, debt: 0 },
    });
    expect(await forgive({ note: 'again' })).toEqual({ status: 200, body: { userId, forgiven: 0, debt: 0 } });
    const support = (await readJson(await stack.apiRequest(`/admin/users/${userId}`))) as Json;
    expect(support.wallet.debts).toEqual([expect.objectContaining({ owed: 80, settled: 0, forgiven: 80 })]);
    expect((await debtMessages(userId)).slice(1)).toEqual([
      { userId, debt: 50, change: -30, reason: 'forgiven', reference: null },
      { userId, debt: 0, change: -50, reason: 'forgiven', reference: null },
    ]);
    // The next pack is credited whole: nothing is owed any more.
    await payPack(userId);
    expect(await wallet(userId)).toMatchObject({ balance: 100, debt: 0 });
    const audit = await auditOf(stack.db, { targetIds: [userId] }, ['action', 'status_code', 'request']);
    expect(audit.filter((row) => row.action === 'debt.forgive')).toEqual([
      { action: 'debt.forgive', status_code: 400, request: expect.anything() },
      {
        action: 'debt.forgive',
        status_code: 200,
        request: expect.objectContaining({ body: { amount: 30, note: 'goodwill, ticket 12' } }),
      },
      {
        action: 'debt.forgive',
        status_code: 200,
        request: expect.objectContaining({ body: { amount: 500, note: 'closing the account' } }),
      },
      { action: 'debt.forgive', status_code: 200, request: expect.objectContaining({ body: { note: 'again' } }) },
    ]);
    expect((await verifyLedger(stack.db)).ok).toBe(true);
  });

  it('a dispute won after its debt was settled gives back what was taken, no token created', async () => {
    const userId = `debt_${stripeId('u')}`;
    const first = await payPack(userId);
    expect(
      (await postAnswer(stack, `/v1/users/${userId}/debits`, { amount: 80, reference: `spent-${userId}` })).status,
    ).toBe(201);
    const disputeId = stripeId('dp');
    const dispute = (reinstated: boolean) =>
      stripeDispute({
        id: disputeId,
        charge: first.charge,
        paymentIntent: first.paymentIntent,
        withdrawn: true,
        reinstated,
      });
    fake.putDispute(dispute(false));
    expect(await deliver('charge.dispute.funds_withdrawn', dispute(false))).toMatchObject({ status: 'processed' });
    expect(await wallet(userId)).toMatchObject({ balance: 0, debt: 80 });
    await payPack(userId);
    expect(await wallet(userId)).toMatchObject({ balance: 20, debt: 0 });
    fake.putDispute(dispute(true));
    expect(await deliver('charge.dispute.funds_reinstated', dispute(true))).toMatchObject({ status: 'processed' });
    // Two packs paid, 80 spent: 120, and nothing owed. The reinstatement gave back the 100 the
    // payment had taken: 20 by the withdrawal, 80 by the settlement (its records moved with it).
    expect(await wallet(userId)).toMatchObject({ balance: 120, debt: 0 });
    expect((await debtMessages(userId)).map((m) => [m.reason, m.change, m.debt])).toEqual([
      ['stripe_dispute', 80, 80],
      ['debt_settled', -80, 0],
    ]);
    const lots = (await wallet(userId)).lots as Json[];
    expect(lots.reduce((sum: number, lot: Json) => sum + lot.remaining, 0)).toBe(120);
    const reinstated = (await entries(userId)).filter((e) => e.reference === `stripe:dispute:${disputeId}:reinstated`);
    expect(reinstated).toEqual([expect.objectContaining({ amount: 100, balance_after: 120 })]);
    expect((await verifyLedger(stack.db)).ok).toBe(true);
  });
});

describe('debt under DEBT_POLICY=forgive', () => {
  let stack: TestStack;
  beforeAll(async () => {
    ({ stack } = await startStackWithFakeStripe({ debtPolicy: 'forgive' }));
    stack.startWorker();
  });
  afterAll(() => stack.stop());

  it('records debt and never settles it from later credits', async () => {
    const userId = `debt_${stripeId('u')}`;
    const deliver = async (type: string, object: Record<string, unknown>) =>
      stack.finishedInboxRow('stripe', await stack.deliverStripe(stripeEventBody(type, object)));
    const ids = { paymentIntent: stripeId('pi'), charge: stripeId('ch') };
    await deliver('payment_intent.succeeded', stripePackIntent({ id: ids.paymentIntent, userId, customer: 'cus_x' }));
    expect(
      (await postAnswer(stack, `/v1/users/${userId}/debits`, { amount: 80, reference: `spent-${userId}` })).status,
    ).toBe(201);
    await deliver(
      'charge.refunded',
      stripeRefundedCharge({ id: ids.charge, paymentIntent: ids.paymentIntent, amount: 499, amountRefunded: 499 }),
    );
    await deliver('payment_intent.succeeded', stripePackIntent({ id: stripeId('pi'), userId, customer: 'cus_x' }));
    const settling = await postAnswer(stack, `/v1/users/${userId}/grants`, {
      amount: 10,
      reference: `asks-${userId}`,
      settlesDebt: true,
    });
    expect(settling).toMatchObject({ status: 201, body: { debtSettled: 0 } });
    expect((await readJson(await stack.apiRequest(`/v1/users/${userId}/wallet`))) as Json).toMatchObject({
      balance: 110,
      debt: 80,
    });
  });
});
