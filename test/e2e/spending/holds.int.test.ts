import { verifyLedger, walletEntryDataSchema } from '@tally/billing-core';
import { sql } from 'kysely';
import { ledgerOf } from '../../support/ledger';
import { grantOverApi, postAnswer, untilDatabaseClockPast } from '../../support/requests';
import { type Json, readJson } from '../../support/stack';
import { stripeDispute, stripeEventBody, stripeId, stripePackIntent } from '../../support/stripe-events';
import { suiteStackWithFakeStripe } from '../../support/suite';

/**
 * Holds (docs/holds.md), over HTTP against real Postgres: placement under the wallet lock,
 * capture (one debit from the reserved lots) and release, expiry by the database clock, the
 * expiry sweeper leaving held tokens alone, and a chargeback waiting for the hold's end.
 */
describe('holds: reserve, capture, release, expire', () => {
  const { stack, fake } = suiteStackWithFakeStripe({ worker: { concurrency: 2, roles: ['inbox', 'relay'] } });
  let sweep: () => Promise<void>;
  beforeAll(() => {
    sweep = stack.startLoop('credit-expiry');
  });

  // Every test ends with the ledger clean: lots within bounds, balance = sum(remaining), draws = amounts.
  afterEach(async () => {
    expect(await verifyLedger(stack.db)).toMatchObject({ ok: true, discrepancies: [] });
    const admin = await readJson(await stack.apiRequest('/admin/ledger/verify'));
    expect(admin).toMatchObject({ ok: true });
  });

  const post = (path: string, body: Json = {}, headers: Record<string, string> = {}) =>
    postAnswer(stack, path, body, headers);
  const grant = (userId: string, amount: number, expiresAt?: string) => grantOverApi(stack, userId, amount, expiresAt);
  const hold = (userId: string, body: Json, headers: Record<string, string> = {}) =>
    post(`/v1/users/${userId}/holds`, body, headers);
  const capture = (userId: string, holdId: string, body: Json = {}) =>
    post(`/v1/users/${userId}/holds/${holdId}/capture`, body);
  const release = (userId: string, holdId: string) => post(`/v1/users/${userId}/holds/${holdId}/release`);
  const wallet = async (userId: string) => readJson(await stack.apiRequest(`/v1/users/${userId}/wallet`));
  const lotRemaining = async (lotId: number) =>
    Number(
      (await stack.db.selectFrom('credit_lots').select('remaining').where('id', '=', lotId).executeTakeFirstOrThrow())
        .remaining,
    );
  const ledger = async (userId: string) =>
    (await ledgerOf(stack.db, userId)).map((e) => [e.reference, e.amount, e.balance_after]);
  const drawsOf = async (reference: string) =>
    (
      await sql<{ lot_id: number; amount: number }>`
        SELECT d.lot_id, d.amount FROM ledger_draws d JOIN ledger_entries e ON e.id = d.ledger_entry_id
         WHERE e.reference = ${reference} ORDER BY d.lot_id`.execute(stack.db)
    ).rows.map((row) => ({ lotId: Number(row.lot_id), amount: Number(row.amount) }));
  const untilPast = (expiresAt: string) => untilDatabaseClockPast(stack.db, expiresAt);

  it('ten concurrent holds of 30 on a balance of 100 give exactly three; the rest are 402 with what is available', async () => {
    const userId = stripeId('user');
    await grant(userId, 100);
    const answers = await Promise.all(
      Array.from({ length: 10 }, (_, i) => hold(userId, { amount: 30, reference: `llm-call-${i}` })),
    );
    const placed = answers.filter((a) => a.status === 201);
    const refused = answers.filter((a) => a.status === 402);
    expect({ placed: placed.length, refused: refused.length }).toEqual({ placed: 3, refused: 7 });
    expect(new Set(placed.map((a) => a.body.available))).toEqual(new Set([70, 40, 10]));
    for (const a of refused) {
      expect(a.body).toEqual({ error: { code: 'insufficient_balance', message: expect.any(String) }, available: 10 });
    }
    for (const a of placed) {
      expect(a.body).toEqual({
        id: expect.stringMatching(/^hold_[0-9a-f]{24}$/),
        reference: expect.stringMatching(/^llm-call-\d$/),
        amount: 30,
        status: 'held',
        expiresAt: expect.any(String),
        available: a.body.available,
      });
    }
    expect(await wallet(userId)).toMatchObject({ balance: 100, held: 90, available: 10 });
    const listed = await readJson(await stack.apiRequest(`/v1/users/${userId}/holds?status=held`));
    expect(listed.holds.map((h: Json) => h.id).sort()).toEqual(placed.map((a) => a.body.id).sort());
    // Holds move no money: no ledger row, the lot's remaining untouched.
    expect(await ledger(userId)).toHaveLength(1);
  });

  it('the same reference answers the same hold (with or without an Idempotency-Key); another amount is 409', async () => {
    const userId = stripeId('user');
    await grant(userId, 100);
    const first = await hold(userId, { amount: 40, reference: 'job-1', expiresInSeconds: 600 });
    expect(first.status).toBe(201);
    const again = await hold(userId, { amount: 40, reference: 'job-1', expiresInSeconds: 600 });
    expect(again).toEqual({ status: 200, body: { ...first.body, available: 60 } });
    const keyed = await hold(userId, { amount: 40, reference: 'job-1' }, { 'Idempotency-Key': 'hold-key-1' });
    expect(keyed.status).toBe(200);
    expect(keyed.body.id).toBe(first.body.id);
    const conflict = await hold(userId, { amount: 41, reference: 'job-1' });
    expect({ status: conflict.status, code: conflict.body.error?.code }).toEqual({
      status: 409,
      code: 'reference_conflict',
    });
    expect(await wallet(userId)).toMatchObject({ balance: 100, held: 40, available: 60 });
    for (const bad of [
      { amount: 0, reference: 'b' },
      { amount: 5, reference: 'has space' },
      { amount: 5, reference: 'b', expiresInSeconds: 86_401 },
      { amount: 5, reference: 'b', expiresInSeconds: 0 },
    ]) {
      expect((await hold(userId, bad)).status).toBe(400);
    }
  });

  it('ten concurrent captures of one hold post one debit, all answer the same, and wallet.debited is written once', async () => {
    const userId = stripeId('user');
    await grant(userId, 100);
    const placed = await hold(userId, { amount: 50, reference: 'gen' });
    const id = placed.body.id as string;
    const answers = await Promise.all(Array.from({ length: 10 }, () => capture(userId, id)));
    expect(answers.map((a) => a.status)).toEqual(Array(10).fill(200));
    expect(new Set(answers.map((a) => JSON.stringify(a.body))).size).toBe(1);
    expect(answers[0]?.body).toEqual({
      id,
      status: 'captured',
      captured: 50,
      released: 0,
      ledgerReference: `hold:${id}:capture`,
      balance: 50,
      available: 50,
    });
    expect((await ledger(userId)).slice(1)).toEqual([[`hold:${id}:capture`, -50, 50]]);
    const messages = await stack.db
      .selectFrom('app_webhook_messages')
      .select(['type', 'data'])
      .where('user_id', '=', userId)
      .where('type', '=', 'wallet.debited')
      .execute();
    expect(messages).toHaveLength(1);
    expect(walletEntryDataSchema.parse(messages[0]?.data)).toMatchObject({
      reference: `hold:${id}:capture`,
      amount: -50,
      balanceAfter: 50,
      reason: 'hold',
    });
  });

  it('a partial capture debits that much from the reserved lots and frees the rest', async () => {
    const userId = stripeId('user');
    const soon = await grant(userId, 30, new Date(Date.now() + 3600_000).toISOString());
    const never = await grant(userId, 100);
    // Draw order: the expiring promotional lot first (30), then the never-expiring one (30 of 100).
    const placed = await hold(userId, { amount: 60, reference: 'llm', reason: 'llm_tokens' });
    expect(placed.body.available).toBe(70);
    const held = await wallet(userId);
    expect(held.lots.map((l: Json) => [l.id, l.remaining, l.held])).toEqual([
      [soon, 30, 30],
      [never, 100, 30],
    ]);
    // A spend cannot take the held part: 71 is refused, though the balance is 130.
    expect((await post(`/v1/users/${userId}/debits`, { amount: 71, reference: 'd-71' })).status).toBe(402);

    const captured = await capture(userId, placed.body.id, { amount: 45 });
    expect(captured).toEqual({
      status: 200,
      body: {
        id: placed.body.id,
        status: 'captured',
        captured: 45,
        released: 15,
        ledgerReference: `hold:${placed.body.id}:capture`,
        balance: 85,
        available: 85,
      },
    });
    expect(await drawsOf(`hold:${placed.body.id}:capture`)).toEqual(
      [
        { lotId: soon, amount: 30 },
        { lotId: never, amount: 15 },
      ].sort((a, b) => a.lotId - b.lotId),
    );
    expect(await wallet(userId)).toMatchObject({ balance: 85, held: 0, available: 85 });
    expect(await ledger(userId)).toEqual([
      [expect.stringMatching(/^grant:/), 30, 30],
      [expect.stringMatching(/^grant:/), 100, 130],
      [`hold:${placed.body.id}:capture`, -45, 85],
    ]);
    const shown = await readJson(await stack.apiRequest(`/v1/users/${userId}/holds/${placed.body.id}`));
    expect(shown).toMatchObject({ status: 'captured', captured: 45, released: 15, reason: 'llm_tokens' });
    // More than held is refused, and nothing moves.
    const other = await hold(userId, { amount: 10, reference: 'llm-2' });
    expect((await capture(userId, other.body.id, { amount: 11 })).status).toBe(400);
    expect(await wallet(userId)).toMatchObject({ balance: 85, held: 10, available: 75 });
  });

  it('release frees the tokens with no ledger row; capture after release or expiry is 409 hold_not_active; repeats answer the first answer', async () => {
    const userId = stripeId('user');
    await grant(userId, 100);
    const a = await hold(userId, { amount: 30, reference: 'a' });
    const released = await release(userId, a.body.id);
    expect(released).toEqual({ status: 200, body: { id: a.body.id, status: 'released', available: 100 } });
    expect(await release(userId, a.body.id)).toEqual(released);
    const afterRelease = await capture(userId, a.body.id);
    expect({ status: afterRelease.status, code: afterRelease.body.error?.code }).toEqual({
      status: 409,
      code: 'hold_not_active',
    });

    const b = await hold(userId, { amount: 40, reference: 'b', expiresInSeconds: 1 });
    expect(b.status).toBe(201);
    expect(await wallet(userId)).toMatchObject({ held: 40, available: 60 });
    await untilPast(b.body.expiresAt);
    // Past expiresAt it stops counting at once: no sweep has run, no ledger row.
    expect(await wallet(userId)).toMatchObject({ balance: 100, held: 0, available: 100 });
    expect(await readJson(await stack.apiRequest(`/v1/users/${userId}/holds/${b.body.id}`))).toMatchObject({
      status: 'expired',
    });
    for (const late of [await capture(userId, b.body.id), await release(userId, b.body.id)]) {
      expect({ status: late.status, code: late.body.error?.code }).toEqual({ status: 409, code: 'hold_not_active' });
    }
    expect((await readJson(await stack.apiRequest(`/v1/users/${userId}/holds?status=held`))).holds).toEqual([]);
    expect(await ledger(userId)).toHaveLength(1);
    const unknown = await capture(userId, 'hold_000000000000000000000000');
    expect(unknown.status).toBe(404);
  });

  it("an expiring lot's held part survives the sweep and expires at the next sweep after the release; a fully held lot does not hold the sweeper", async () => {
    const userId = stripeId('user');
    const lotId = await grant(userId, 100, new Date(Date.now() + 3600_000).toISOString());
    const placed = await hold(userId, { amount: 40, reference: 'held-over-expiry' });
    const other = stripeId('user');
    const otherLot = await grant(other, 20, new Date(Date.now() + 3600_000).toISOString());
    const whole = await hold(other, { amount: 20, reference: 'all-of-it' });
    await sql`UPDATE credit_lots SET expires_at = now() - interval '1 second' WHERE id IN (${lotId}, ${otherLot})`.execute(
      stack.db,
    );
    await sweep();
    expect(await lotRemaining(lotId)).toBe(40);
    expect(await ledger(userId)).toEqual([
      [expect.stringMatching(/^grant:/), 100, 100],
      [`lot:${lotId}:expired`, -60, 40],
    ]);
    expect(await wallet(userId)).toMatchObject({ balance: 40, held: 40, available: 0 });
    // The fully held lot: nothing expired, and a second sweep (the sweeper does not spin on it) neither.
    await sweep();
    expect(await lotRemaining(otherLot)).toBe(20);
    expect(await ledger(other)).toHaveLength(1);

    // Released, the 40 are spendable no more (the lot has expired) and go at the next sweep.
    expect((await release(userId, placed.body.id)).body).toMatchObject({ status: 'released', available: 40 });
    await sweep();
    expect(await lotRemaining(lotId)).toBe(0);
    expect((await ledger(userId)).at(-1)).toEqual([`lot:${lotId}:expired:2`, -40, 0]);

    // The other's hold is captured after its lot expired: drawn from that expired lot.
    const captured = await capture(other, whole.body.id, { amount: 15 });
    expect(captured.body).toMatchObject({ captured: 15, released: 5, balance: 5 });
    expect(await drawsOf(`hold:${whole.body.id}:capture`)).toEqual([{ lotId: otherLot, amount: 15 }]);
    await sweep();
    expect(await lotRemaining(otherLot)).toBe(0);
    expect((await ledger(other)).at(-1)).toEqual([`lot:${otherLot}:expired`, -5, 0]);
  });

  /** A 100-token pack paid by a new intent through a signed webhook. */
  async function buyPack(userId: string) {
    const paymentIntent = stripeId('pi');
    const charge = stripeId('ch');
    const row = await stack.finishedInboxRow(
      'stripe',
      await stack.deliverStripe(
        stripeEventBody(
          'payment_intent.succeeded',
          stripePackIntent({ id: paymentIntent, userId, customer: stripeId('cus') }),
        ),
      ),
    );
    expect(row.outcome_code).toBe('credited');
    return { paymentIntent, charge };
  }
  async function chargeback(paymentIntent: string, charge: string) {
    const disputeId = stripeId('dp');
    const dispute = stripeDispute({ id: disputeId, charge, paymentIntent, withdrawn: true });
    fake.putDispute(dispute);
    const row = await stack.finishedInboxRow(
      'stripe',
      await stack.deliverStripe(stripeEventBody('charge.dispute.funds_withdrawn', dispute)),
    );
    expect(row.outcome_code).toBe('dispute_funds_withdrawn');
    return disputeId;
  }
  const disputeRow = (disputeId: string) =>
    stack.db
      .selectFrom('stripe_disputes')
      .select(['tokens_owed', 'tokens_taken', 'shortfall'])
      .where('dispute_id', '=', disputeId)
      .executeTakeFirstOrThrow();

  it('a chargeback while tokens are held takes no held token and waits for the release, which settles its shortfall', async () => {
    const userId = stripeId('user');
    const { paymentIntent, charge } = await buyPack(userId);
    const placed = await hold(userId, { amount: 70, reference: 'render' });
    const disputeId = await chargeback(paymentIntent, charge);
    // Only the unheld 30 were taken; the 70 held stay in the lot.
    expect(await wallet(userId)).toMatchObject({ balance: 70, held: 70, available: 0 });
    expect(await disputeRow(disputeId)).toMatchObject({ tokens_owed: 100, tokens_taken: 30, shortfall: 70 });

    const released = await release(userId, placed.body.id);
    expect(released.body).toEqual({ id: placed.body.id, status: 'released', available: 0 });
    expect(await ledger(userId)).toEqual([
      [`stripe:payment:${paymentIntent}`, 100, 100],
      [`stripe:dispute:${disputeId}`, -30, 70],
      [`hold:${placed.body.id}:release:recovered`, -70, 0],
    ]);
    expect(await disputeRow(disputeId)).toMatchObject({ tokens_taken: 100 });
    const payment = await stack.db
      .selectFrom('payments')
      .select(['tokens_refunded', 'refund_shortfall'])
      .where('provider_payment_id', '=', paymentIntent)
      .executeTakeFirstOrThrow();
    expect(payment).toEqual({ tokens_refunded: 100, refund_shortfall: 0 });
  });

  it('a chargeback while tokens are held: a capture for less settles the shortfall with what it frees', async () => {
    const userId = stripeId('user');
    const { paymentIntent, charge } = await buyPack(userId);
    const placed = await hold(userId, { amount: 60, reference: 'song' });
    const disputeId = await chargeback(paymentIntent, charge);
    expect(await wallet(userId)).toMatchObject({ balance: 60, held: 60, available: 0 });
    const captured = await capture(userId, placed.body.id, { amount: 25 });
    expect(captured.body).toMatchObject({ captured: 25, released: 35, balance: 0, available: 0 });
    expect(await ledger(userId)).toEqual([
      [`stripe:payment:${paymentIntent}`, 100, 100],
      [`stripe:dispute:${disputeId}`, -40, 60],
      [`hold:${placed.body.id}:capture`, -25, 35],
      [`hold:${placed.body.id}:release:recovered`, -35, 0],
    ]);
    expect(await disputeRow(disputeId)).toMatchObject({ tokens_taken: 75 });
  });

  it('a chargeback while tokens are held: a hold that expires frees them with no row of its own, and the sweep settles the shortfall', async () => {
    const userId = stripeId('user');
    const { paymentIntent, charge } = await buyPack(userId);
    const placed = await hold(userId, { amount: 50, reference: 'short', expiresInSeconds: 1 });
    const disputeId = await chargeback(paymentIntent, charge);
    expect(await disputeRow(disputeId)).toMatchObject({ tokens_taken: 50, shortfall: 50 });
    await untilPast(placed.body.expiresAt);
    await sweep();
    expect(await ledger(userId)).toEqual([
      [`stripe:payment:${paymentIntent}`, 100, 100],
      [`stripe:dispute:${disputeId}`, -50, 50],
      [`hold:${placed.body.id}:release:recovered`, -50, 0],
    ]);
    expect(await disputeRow(disputeId)).toMatchObject({ tokens_taken: 100 });
    // Settled once: the next operation on the wallet recovers nothing more.
    expect((await hold(userId, { amount: 1, reference: 'after' })).status).toBe(402);
    expect(await ledger(userId)).toHaveLength(3);
  });
  it('a take-back after a hold lapsed takes the freed tokens itself: settling that hold later takes nothing from a later credit', async () => {
    const userId = stripeId('user');
    const { paymentIntent, charge } = await buyPack(userId);
    expect((await post(`/v1/users/${userId}/debits`, { amount: 30, reference: 'spent' })).status).toBe(201);
    const placed = await hold(userId, { amount: 50, reference: 'lapses', expiresInSeconds: 1 });
    await untilPast(placed.body.expiresAt);
    // The hold counts for nothing now (not settled yet): the chargeback takes all 70 it finds.
    const disputeId = await chargeback(paymentIntent, charge);
    expect(await disputeRow(disputeId)).toMatchObject({ tokens_taken: 70, shortfall: 30 });
    // Tokens the user gets after the chargeback are theirs: the lapsed hold, settled at the next
    // operation on the wallet, does not settle a shortfall recorded after its expiry.
    await grant(userId, 40);
    expect((await post(`/v1/users/${userId}/debits`, { amount: 1, reference: 'after' })).status).toBe(201);
    await sweep();
    expect(await ledger(userId)).toEqual([
      [`stripe:payment:${paymentIntent}`, 100, 100],
      ['debit:spent', -30, 70],
      [`stripe:dispute:${disputeId}`, -70, 0],
      [expect.stringMatching(/^grant:/), 40, 40],
      ['debit:after', -1, 39],
    ]);
    expect(
      await stack.db
        .selectFrom('holds')
        .select(['status', 'settled_at'])
        .where('id', '=', placed.body.id)
        .executeTakeFirst(),
    ).toEqual({ status: 'held', settled_at: expect.any(Date) });
  });
});
