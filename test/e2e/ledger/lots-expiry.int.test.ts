import {
  claimStudioRequest,
  expireDueLots,
  failStudioRequest,
  grantDueInstallments,
  verifyLedger,
  walletCreditsExpiredDataSchema,
  walletCreditsExpiringDataSchema,
} from '@tally/billing-core';
import { sql } from 'kysely';
import pg from 'pg';
import { drawsOf, ledgerOf, lotColumns, lotsOf } from '../../support/ledger';
import { type Json, readJson } from '../../support/stack';
import { stripeEventBody, stripeId, stripePackIntent } from '../../support/stripe-events';
import { daysAhead, replayStripeEvents, subscribeUntil } from '../../support/stripe-flows';
import { suiteStackWithFakeStripe } from '../../support/suite';

/**
 * The credit expiry sweeper (docs/lots.md "Expiry and rollover"), end to end: lots made by signed
 * webhooks through the real worker, the sweeper run as the worker's `credit-expiry` role
 * (runOnce), time moved by setting `expires_at` in the past by SQL.
 */
describe('credit lots expire through the sweeper', () => {
  const { stack, fake } = suiteStackWithFakeStripe({ worker: { concurrency: 4, roles: ['inbox', 'relay'] } });
  let sweep: () => Promise<void>;
  beforeAll(() => {
    sweep = stack.startLoop('credit-expiry');
  });

  const deliver = async (body: string) => stack.finishedInboxRow('stripe', await stack.deliverStripe(body));
  const lotRows = (userId: string) => lotsOf(stack.db, userId, [...lotColumns, 'rollover_max']);
  const ledgerRows = (userId: string) => ledgerOf(stack.db, userId, ['reference', 'amount', 'balance_after', 'reason']);
  const drawRows = (userId: string) => drawsOf(stack.db, userId);
  const messageRows = (userId: string) =>
    stack.db
      .selectFrom('app_webhook_messages')
      .select(['type', 'data'])
      .where('user_id', '=', userId)
      .where(sql<boolean>`type LIKE 'wallet.%'`)
      .orderBy('id')
      .execute();
  const stateOf = async (userId: string) => ({
    lots: await lotRows(userId),
    ledger: await ledgerRows(userId),
    draws: await drawRows(userId),
    messages: await messageRows(userId),
  });
  const expireNow = (lotId: number) =>
    sql`UPDATE credit_lots SET expires_at = now() - interval '1 second' WHERE id = ${lotId}`.execute(stack.db);

  const subscribe = (userId: string, priceId: string, periodEnd: number) =>
    subscribeUntil(stack, fake, { userId, priceId, periodEnd });

  it("a monthly invoice's period_end credits get one wallet.credits_expiring notice, then expire at the period end in one credits_expired entry announced as wallet.credits_expired, while a pack's never expire; sweeping and replaying again change nothing", async () => {
    const userId = stripeId('user');
    // The period ends within CREDIT_EXPIRY_NOTICE_HOURS (72): the notice is due at once.
    const periodEnd = Math.floor(Date.now() / 1000) + 48 * 3600;
    const { invoiceId, bodies } = await subscribe(userId, 'price_premium_monthly_expiring', periodEnd);
    const paymentIntentId = stripeId('pi');
    const pack = stripeEventBody(
      'payment_intent.succeeded',
      stripePackIntent({ id: paymentIntentId, userId, customer: stripeId('cus') }),
    );
    expect(await deliver(pack)).toMatchObject({ status: 'processed', outcome_code: 'credited' });
    const [subLot, packLot] = await lotRows(userId);
    if (!subLot || !packLot) throw new Error('the invoice and the pack did not create their lots');
    const expiresAt = new Date(periodEnd * 1000);
    expect(subLot).toMatchObject({ source: `stripe:invoice:${invoiceId}`, remaining: 100, expires_at: expiresAt });

    await sweep();
    await sweep();
    const notice = {
      type: 'wallet.credits_expiring',
      data: { userId, lotId: subLot.id, remaining: 100, expiresAt: expiresAt.toISOString() },
    };
    expect((await messageRows(userId)).map((m) => m.type)).toEqual([
      'wallet.credited',
      'wallet.credited',
      'wallet.credits_expiring',
    ]);
    expect((await messageRows(userId))[2]).toEqual(notice);
    expect(walletCreditsExpiringDataSchema.safeParse(notice.data).success).toBe(true);
    // Not yet expired: nothing moved.
    expect((await ledgerRows(userId)).map((row) => row.reference)).toEqual([
      `stripe:invoice:${invoiceId}`,
      `stripe:payment:${paymentIntentId}`,
    ]);

    await expireNow(subLot.id);
    await sweep();
    const reference = `lot:${subLot.id}:expired`;
    const expired = await stateOf(userId);
    expect(expired.lots).toEqual([
      { ...subLot, remaining: 0, expires_at: expect.any(Date) },
      { ...packLot, remaining: 100 },
    ]);
    expect(expired.ledger).toEqual([
      { reference: `stripe:invoice:${invoiceId}`, amount: 100, balance_after: 100, reason: 'subscription_period' },
      {
        reference: `stripe:payment:${paymentIntentId}`,
        amount: 100,
        balance_after: 200,
        reason: expect.any(String),
      },
      { reference, amount: -100, balance_after: 100, reason: 'credits_expired' },
    ]);
    expect(expired.draws).toEqual([{ reference, lot_id: subLot.id, amount: 100 }]);
    const expiredMessage = {
      type: 'wallet.credits_expired',
      data: { userId, lotId: subLot.id, amount: -100, balanceAfter: 100, reference },
    };
    expect(expired.messages.map((m) => m.type)).toEqual([
      'wallet.credited',
      'wallet.credited',
      'wallet.credits_expiring',
      'wallet.credits_expired',
    ]);
    expect(expired.messages[3]).toEqual(expiredMessage);
    expect(walletCreditsExpiredDataSchema.safeParse(expiredMessage.data).success).toBe(true);
    expect(await verifyLedger(stack.db)).toMatchObject({ ok: true, discrepancies: [] });

    // A second sweep and a replay of every event change nothing.
    await sweep();
    await replayStripeEvents(stack, [...bodies, pack]);
    await sweep();
    expect(await stateOf(userId)).toEqual(expired);
  });

  it('a rollover carries at most rolloverMax into a subscription lot that expires a period later and does not roll over again; the expiry takes the rest', async () => {
    const userId = stripeId('user');
    const { invoiceId } = await subscribe(userId, 'price_premium_monthly_rollover', daysAhead(30));
    const [lot] = await lotRows(userId);
    if (!lot) throw new Error('the invoice created no lot');
    expect(lot).toMatchObject({ source: `stripe:invoice:${invoiceId}`, amount: 100, rollover_max: 30 });
    await sweep(); // 30 days out: no notice, no expiry
    await expireNow(lot.id);
    await sweep();
    const [expiredLot, rolloverLot] = await lotRows(userId);
    const monthLater = await sql<{ at: Date }>`
      SELECT ${expiredLot?.expires_at}::timestamptz + interval '1 month' AS at`.execute(stack.db);
    expect(await lotRows(userId)).toEqual([
      { ...lot, remaining: 0, expires_at: expiredLot?.expires_at },
      {
        id: expect.any(Number),
        category: 'subscription',
        source: `lot:${lot.id}:rollover`,
        amount: 30,
        remaining: 30,
        expires_at: monthLater.rows[0]?.at,
        rollover_max: 0,
      },
    ]);
    if (!rolloverLot) throw new Error('no rollover lot');
    // The ledger: the expiry takes only the rest; the move between lots is no entry (same balance).
    expect(await ledgerRows(userId)).toEqual([
      { reference: `stripe:invoice:${invoiceId}`, amount: 100, balance_after: 100, reason: 'subscription_period' },
      { reference: `lot:${lot.id}:expired`, amount: -70, balance_after: 30, reason: 'credits_expired' },
    ]);
    expect(await drawRows(userId)).toEqual([{ reference: `lot:${lot.id}:expired`, lot_id: lot.id, amount: 70 }]);

    // The rollover lot expires in turn, whole: it does not roll over again.
    await expireNow(rolloverLot.id);
    await sweep();
    expect((await lotRows(userId)).map((row) => [row.source, row.remaining])).toEqual([
      [`stripe:invoice:${invoiceId}`, 0],
      [`lot:${lot.id}:rollover`, 0],
    ]);
    expect((await ledgerRows(userId)).map((row) => [row.reference, row.amount, row.balance_after])).toEqual([
      [`stripe:invoice:${invoiceId}`, 100, 100],
      [`lot:${lot.id}:expired`, -70, 30],
      [`lot:${rolloverLot.id}:expired`, -30, 0],
    ]);
    // No lot was ever within CREDIT_EXPIRY_NOTICE_HOURS of its expiry at a sweep: no notice.
    expect((await messageRows(userId)).map((m) => m.type)).toEqual([
      'wallet.credited',
      'wallet.credits_expired',
      'wallet.credits_expired',
    ]);
    expect(await verifyLedger(stack.db)).toMatchObject({ ok: true, discrepancies: [] });
  });

  it("an annual plan's monthly grants expire in turn: the first twelfth when installment 1 is due, installment 1 after it", async () => {
    const userId = stripeId('user');
    const { invoiceId } = await subscribe(userId, 'price_premium_annual_expiring', daysAhead(365));
    await sql`UPDATE stripe_installments SET due_at = now() - interval '1 second'
              WHERE invoice_id = ${invoiceId} AND sequence = 1`.execute(stack.db);
    await grantDueInstallments(stack.outboxDeps(), { batchSize: 10, processingStaleAfterMs: 60_000, maxAttempts: 5 });
    const [first, installment] = await lotRows(userId);
    if (!first || !installment) throw new Error('the invoice and installment 1 did not create their lots');
    // The first twelfth's month is over (its expiry reached); installment 1's is not.
    await expireNow(first.id);
    await sweep();
    expect((await lotRows(userId)).map((row) => [row.id, row.remaining])).toEqual([
      [first.id, 0],
      [installment.id, 100],
    ]);
    await expireNow(installment.id);
    await sweep();
    expect((await ledgerRows(userId)).map((row) => [row.reference, row.amount, row.balance_after])).toEqual([
      [`stripe:invoice:${invoiceId}`, 100, 100],
      [expect.stringMatching(/^stripe:installment:/), 100, 200],
      [`lot:${first.id}:expired`, -100, 100],
      [`lot:${installment.id}:expired`, -100, 0],
    ]);
  });

  it("an annual plan's installment lots roll over as the invoice's first twelfth does", async () => {
    const userId = stripeId('user');
    const { invoiceId } = await subscribe(userId, 'price_premium_annual_rollover', daysAhead(365));
    await sql`UPDATE stripe_installments SET due_at = now() - interval '1 second'
              WHERE invoice_id = ${invoiceId} AND sequence = 1`.execute(stack.db);
    await grantDueInstallments(stack.outboxDeps(), { batchSize: 10, processingStaleAfterMs: 60_000, maxAttempts: 5 });
    const [first, installment] = await lotRows(userId);
    if (!first || !installment) throw new Error('the invoice and installment 1 did not create their lots');
    expect([first.rollover_max, installment.rollover_max]).toEqual([30, 30]);
    await expireNow(installment.id);
    await sweep();
    expect((await lotRows(userId)).map((row) => [row.source, row.remaining, row.rollover_max])).toEqual([
      [`stripe:invoice:${invoiceId}`, 100, 30],
      [installment.source, 0, 30],
      [`lot:${installment.id}:rollover`, 30, 0],
    ]);
    expect((await ledgerRows(userId)).map((row) => [row.reference, row.amount, row.balance_after])).toEqual([
      [`stripe:invoice:${invoiceId}`, 100, 100],
      [installment.source, 100, 200],
      [`lot:${installment.id}:expired`, -70, 130],
    ]);
  });

  it("a failed generation's refund returns its tokens to the expired lot it drew from, and they expire at the next sweep under lot:{id}:expired:2", async () => {
    const userId = stripeId('user');
    await subscribe(userId, 'price_premium_monthly_expiring', daysAhead(30));
    const [lot] = await lotRows(userId);
    if (!lot) throw new Error('the invoice created no lot');
    const spend = async (charged: number) => {
      const response = await stack.apiRequest(`/v1/users/${userId}/studio/requests`, {
        method: 'POST',
        body: { kind: 'music', full: true, input: { prompt: 'expiry' } },
      });
      const body = await readJson(response);
      expect({ status: response.status, charged: body.tokensCharged }).toEqual({ status: 202, charged });
      return body as Json;
    };
    await spend(0);
    await spend(0); // the free allowance
    const request = await spend(15);
    await expireNow(lot.id);
    await sweep();
    expect((await lotRows(userId)).map((row) => row.remaining)).toEqual([0]);

    const row = await stack.db
      .selectFrom('studio_requests')
      .select('id')
      .where('public_id', '=', request.id)
      .executeTakeFirstOrThrow();
    expect(await claimStudioRequest(stack.db, row.id)).toMatchObject({ status: 'processing' });
    await failStudioRequest(stack.outboxDeps(), row.id, { code: 'ai_failed', message: 'boom' });
    expect((await lotRows(userId)).map((l) => l.remaining)).toEqual([15]);

    await sweep();
    const second = `lot:${lot.id}:expired:2`;
    expect((await ledgerRows(userId)).map((e) => [e.reference, e.amount, e.balance_after])).toEqual([
      [lot.source, 100, 100],
      [`studio:${request.id}:debit`, -15, 85],
      [`lot:${lot.id}:expired`, -85, 0],
      [`studio:${request.id}:refund`, 15, 15],
      [second, -15, 0],
    ]);
    expect(await drawRows(userId)).toEqual([
      { reference: `studio:${request.id}:debit`, lot_id: lot.id, amount: 15 },
      { reference: `lot:${lot.id}:expired`, lot_id: lot.id, amount: 85 },
      { reference: `studio:${request.id}:refund`, lot_id: lot.id, amount: 15 },
      { reference: second, lot_id: lot.id, amount: 15 },
    ]);
    const expiredMessages = (await messageRows(userId)).filter((m) => m.type === 'wallet.credits_expired');
    expect(expiredMessages.map((m) => m.data)).toEqual([
      { userId, lotId: lot.id, amount: -85, balanceAfter: 0, reference: `lot:${lot.id}:expired` },
      { userId, lotId: lot.id, amount: -15, balanceAfter: 0, reference: second },
    ]);
    expect(await verifyLedger(stack.db)).toMatchObject({ ok: true, discrepancies: [] });
  });

  it('sweepers never wait behind a wallet a posting holds, and several at once expire each lot once', async () => {
    const users = [1, 2, 3, 4].map(() => stripeId('user'));
    for (const userId of users) {
      await subscribe(userId, 'price_premium_monthly_expiring', daysAhead(30));
    }
    const lotIds = [];
    for (const userId of users) {
      const [lot] = await lotRows(userId);
      if (!lot) throw new Error('no lot');
      lotIds.push(lot.id);
      await expireNow(lot.id);
    }
    const [held, ...others] = users;
    // A posting of the first user holds its wallet: the sweeper skips that wallet and finishes. The
    // holder is its own session; should a sweeper wait for it (the bug), Postgres ends the idle
    // transaction after 10 s, the sweeper goes on, and the held lot is expired: the test fails.
    const holder = new pg.Client({ connectionString: stack.database.url });
    holder.on('error', () => {});
    await holder.connect();
    let passes: { expired: number }[];
    try {
      await holder.query('BEGIN');
      await holder.query(`SET LOCAL idle_in_transaction_session_timeout = '10s'`);
      await holder.query('SELECT 1 FROM wallets WHERE user_id = $1 FOR UPDATE', [held]);
      passes = await Promise.all([
        expireDueLots(stack.outboxDeps(), { batchSize: 2 }),
        expireDueLots(stack.outboxDeps(), { batchSize: 2 }),
        expireDueLots(stack.outboxDeps(), { batchSize: 10 }),
      ]);
      await holder.query('COMMIT');
    } finally {
      await holder.end().catch(() => {});
    }
    expect(passes.reduce((sum, pass) => sum + pass.expired, 0)).toBe(others.length);
    expect((await lotRows(held ?? '')).map((lot) => lot.remaining)).toEqual([100]);

    // Then several sweepers at once: the held wallet's lot expires, once.
    await Promise.all([sweep(), expireDueLots(stack.outboxDeps(), { batchSize: 1 }), sweep()]);
    for (const [index, userId] of users.entries()) {
      expect((await ledgerRows(userId)).map((e) => [e.reference, e.amount, e.balance_after])).toEqual([
        [expect.stringMatching(/^stripe:invoice:/), 100, 100],
        [`lot:${lotIds[index]}:expired`, -100, 0],
      ]);
      expect((await messageRows(userId)).map((m) => m.type)).toEqual(['wallet.credited', 'wallet.credits_expired']);
    }
  });
});
