import { verifyLedger } from '@tally/billing-core';
import { sql } from 'kysely';
import type { FakeStripe } from '../../support/fakes/fake-stripe';
import { type Json, readJson, startStackWithFakeStripe, type TestStack } from '../../support/stack';
import {
  stripeDispute,
  stripeEventBody,
  stripeId,
  stripePackIntent,
  stripeRefundedCharge,
} from '../../support/stripe-events';

/**
 * Found by the model check (docs/model-check.md): a hold on a lot that support voided lapses, and
 * nothing has settled it yet when a chargeback arrives. The tokens it freed on the voided lot are
 * not the user's (a void is a standing state, product spec "What a void means"), so the
 * chargeback must not take them as the user's: before the fix it did, the dispute's shortfall
 * came out 50 short, and the user kept 50 tokens of a charged-back pack once their other hold was
 * released. Through signed webhooks, the worker and the api.
 */
describe("a take-back never counts a voided lot's tokens as the user's", () => {
  let stack: TestStack;
  let fake: FakeStripe;
  beforeAll(async () => {
    ({ stack, fake } = await startStackWithFakeStripe());
    stack.startWorker();
  });
  afterAll(() => stack.stop());

  const post = (userId: string, path: string, body?: unknown) =>
    stack
      .apiRequest(path.startsWith('/admin') ? path : `/v1/users/${userId}${path}`, {
        method: 'POST',
        ...(body !== undefined ? { body } : {}),
      })
      .then(async (response) => ({ status: response.status, body: (await readJson(response)) as Json }));
  const wallet = async (userId: string) =>
    readJson(await stack.apiRequest(`/v1/users/${userId}/wallet`)) as Promise<Json>;

  /**
   * A paid pack of 100, a promotional grant of 50 voided while a hold reserves all of it, a hold of
   * the pack's 100, and the first hold lapsed with nothing settling it: the state both take-backs
   * below arrive in.
   */
  async function voidedLotWithLapsedHold(userId: string) {
    const paymentIntent = stripeId('pi');
    const paid = await stack.deliverStripe(
      stripeEventBody(
        'payment_intent.succeeded',
        stripePackIntent({ id: paymentIntent, userId, customer: stripeId('cus') }),
      ),
    );
    expect(await stack.finishedInboxRow('stripe', paid)).toMatchObject({ outcome_code: 'credited' });
    const grant = await post(userId, '/grants', { amount: 50, reference: `${userId}-promo` });
    expect(grant.status).toBe(201);
    // The promotional lot comes first in the draw order: the first hold reserves all of it.
    const onPromo = await post(userId, '/holds', { amount: 50, reference: 'on-promo', expiresInSeconds: 3600 });
    expect(onPromo).toMatchObject({ status: 201, body: { available: 100 } });
    const voided = await post(userId, `/admin/users/${userId}/lots/${grant.body.lotId}/void`);
    expect(voided).toMatchObject({ status: 200, body: { taken: 0, balance: 150 } });
    const onPack = await post(userId, '/holds', { amount: 100, reference: 'on-pack', expiresInSeconds: 86_400 });
    expect(onPack).toMatchObject({ status: 201, body: { available: 0 } });
    // The first hold lapses (its expiry moved into the past, as lots-expiry moves a lot's); nothing settles it.
    await sql`UPDATE holds SET expires_at = now() - interval '1 second' WHERE id = ${onPromo.body.id}`.execute(
      stack.db,
    );

    return { paymentIntent, grantLotId: grant.body.lotId as number, onPackId: onPack.body.id as string };
  }

  /** Ends the hold on the pack: what it frees settles the take-back whole; the user keeps nothing. */
  async function releaseSettlesWhole(userId: string, onPackId: string, takeBackRecovered: string) {
    expect(await post(userId, `/holds/${onPackId}/release`)).toMatchObject({
      status: 200,
      body: { status: 'released', available: 0 },
    });
    expect(await wallet(userId)).toMatchObject({ balance: 0, held: 0, available: 0, lots: [] });
    const ledger = await stack.db
      .selectFrom('ledger_entries')
      .select(['reference', 'amount', 'balance_after'])
      .where('user_id', '=', userId)
      .orderBy('id')
      .execute();
    expect(ledger.slice(-1).map((e) => [e.reference, e.amount, e.balance_after])).toEqual([
      [takeBackRecovered, -100, 0],
    ]);
    expect(await verifyLedger(stack.db)).toMatchObject({ ok: true, discrepancies: [] });
  }

  it('a chargeback after a hold on a voided lot lapsed unsettled takes only the user tokens; the rest waits for the other hold, which then settles it whole', async () => {
    const userId = stripeId('user');
    const paymentIntent = stripeId('pi');
    const disputeId = stripeId('dp');
    const paid = await stack.deliverStripe(
      stripeEventBody(
        'payment_intent.succeeded',
        stripePackIntent({ id: paymentIntent, userId, customer: stripeId('cus') }),
      ),
    );
    expect(await stack.finishedInboxRow('stripe', paid)).toMatchObject({ outcome_code: 'credited' });
    const grant = await post(userId, '/grants', { amount: 50, reference: `${userId}-promo` });
    expect(grant.status).toBe(201);
    // The promotional lot comes first in the draw order: the first hold reserves all of it.
    const onPromo = await post(userId, '/holds', { amount: 50, reference: 'on-promo', expiresInSeconds: 3600 });
    expect(onPromo).toMatchObject({ status: 201, body: { available: 100 } });
    const voided = await post(userId, `/admin/users/${userId}/lots/${grant.body.lotId}/void`);
    expect(voided).toMatchObject({ status: 200, body: { taken: 0, balance: 150 } });
    const onPack = await post(userId, '/holds', { amount: 100, reference: 'on-pack', expiresInSeconds: 86_400 });
    expect(onPack).toMatchObject({ status: 201, body: { available: 0 } });
    // The first hold lapses (its expiry moved into the past, as lots-expiry moves a lot's); nothing settles it.
    await sql`UPDATE holds SET expires_at = now() - interval '1 second' WHERE id = ${onPromo.body.id}`.execute(
      stack.db,
    );

    const dispute = { id: disputeId, charge: stripeId('ch'), paymentIntent, withdrawn: true };
    fake.putDispute(stripeDispute(dispute));
    const withdrawn = await stack.deliverStripe(
      stripeEventBody('charge.dispute.funds_withdrawn', stripeDispute(dispute)),
    );
    expect(await stack.finishedInboxRow('stripe', withdrawn)).toMatchObject({
      outcome_code: 'dispute_funds_withdrawn',
    });
    // The lapsed hold's 50 went back to the voided lot and were taken at once; the pack's 100 are
    // all held, so the chargeback took nothing and waits for the hold: a shortfall of 100.
    const record = await stack.db
      .selectFrom('stripe_disputes')
      .select(['tokens_owed', 'tokens_taken', 'shortfall'])
      .where('dispute_id', '=', disputeId)
      .executeTakeFirstOrThrow();
    expect(record).toEqual({ tokens_owed: 100, tokens_taken: 0, shortfall: 100 });
    expect(await wallet(userId)).toMatchObject({ balance: 100, held: 100, available: 0 });

    // The hold on the pack ends: what it frees settles the chargeback whole.
    expect(await post(userId, `/holds/${onPack.body.id}/release`)).toMatchObject({
      status: 200,
      body: { status: 'released', available: 0 },
    });
    expect(await wallet(userId)).toMatchObject({ balance: 0, held: 0, available: 0, lots: [] });
    const ledger = await stack.db
      .selectFrom('ledger_entries')
      .select(['reference', 'amount', 'balance_after'])
      .where('user_id', '=', userId)
      .orderBy('id')
      .execute();
    expect(ledger.map((e) => [e.reference, e.amount, e.balance_after])).toEqual([
      [`stripe:payment:${paymentIntent}`, 100, 100],
      [`grant:${userId}-promo`, 50, 150],
      [`lot:${grant.body.lotId}:voided`, -50, 100],
      [`hold:${onPack.body.id}:release:recovered`, -100, 0],
    ]);
    expect(await verifyLedger(stack.db)).toMatchObject({ ok: true, discrepancies: [] });
  });

  it('a full refund after a hold on a voided lot lapsed unsettled takes only the user tokens; the rest waits for the other hold', async () => {
    const userId = stripeId('user');
    const { paymentIntent, grantLotId, onPackId } = await voidedLotWithLapsedHold(userId);
    const refunded = await stack.deliverStripe(
      stripeEventBody('charge.refunded', stripeRefundedCharge({ id: stripeId('ch'), paymentIntent })),
    );
    expect(await stack.finishedInboxRow('stripe', refunded)).toMatchObject({ status: 'processed' });
    // The lapsed hold's 50 were the voided lot's, taken at once; the pack's 100 are held: the
    // refund took nothing and recorded all 100 as its shortfall (before the fix: 50 taken, 50 short).
    const payment = await stack.db
      .selectFrom('payments')
      .select(['tokens_refunded', 'refund_shortfall'])
      .where('provider_payment_id', '=', paymentIntent)
      .executeTakeFirstOrThrow();
    expect(payment).toEqual({ tokens_refunded: 0, refund_shortfall: 100 });
    const voids = await stack.db
      .selectFrom('ledger_entries')
      .select(['reference', 'amount'])
      .where('user_id', '=', userId)
      .where('reason', '=', 'lot_voided')
      .execute();
    expect(voids).toEqual([{ reference: `lot:${grantLotId}:voided`, amount: -50 }]);
    await releaseSettlesWhole(userId, onPackId, `hold:${onPackId}:release:recovered`);
  });
});
