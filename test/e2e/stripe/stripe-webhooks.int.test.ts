import { findWallet } from '@tally/billing-core';
import Stripe from 'stripe';
import { stripeTokenPackPayment } from '../../support/events';
import { ledgerOf } from '../../support/ledger';
import { eventually, readJson, signStripe, stripeOldSecret, stripeSecret } from '../../support/stack';
import { suiteStack } from '../../support/suite';
import { untilInboxRows } from '../../support/waits';

describe('Stripe webhooks', () => {
  const stack = suiteStack({ worker: {} });

  const rowsFor = (providerEventId: string) => stack.inboxRows('stripe', providerEventId);

  it('credits a token pack payment once when the same signed event arrives 20 times at once', async () => {
    const body = stripeTokenPackPayment({
      eventId: 'evt_concurrent_1',
      paymentIntentId: 'pi_concurrent_1',
      userId: 'stripe-user-1',
    });
    const signature = signStripe(body);

    const responses = await Promise.all(Array.from({ length: 20 }, () => stack.postStripe(body, signature)));
    const answers = await Promise.all(
      responses.map(async (response) => ({ status: response.status, body: await readJson(response) })),
    );
    expect(answers.every((answer) => answer.status === 200)).toBe(true);
    expect(answers.filter((answer) => answer.body.status === 'accepted')).toHaveLength(1);
    expect(answers.filter((answer) => answer.body.status === 'duplicate')).toHaveLength(19);

    const [row] = await eventually('the event to be processed', async () => {
      const rows = await rowsFor('evt_concurrent_1');
      return rows[0]?.status === 'processed' ? rows : undefined;
    });
    expect(await rowsFor('evt_concurrent_1')).toHaveLength(1);
    expect(row).toMatchObject({
      type: 'payment_intent.succeeded',
      livemode: false,
      user_id: 'stripe-user-1',
      provider_payment_intent_id: 'pi_concurrent_1',
      provider_customer_id: 'cus_test_1',
      attempts: 1,
    });
    const ledger = await stack.db
      .selectFrom('ledger_entries')
      .selectAll()
      .where('user_id', '=', 'stripe-user-1')
      .execute();
    expect(ledger).toEqual([
      expect.objectContaining({
        reference: 'stripe:payment:pi_concurrent_1',
        amount: 100,
        balance_before: 0,
        balance_after: 100,
      }),
    ]);
    expect(await findWallet(stack.db, 'stripe-user-1')).toEqual({ userId: 'stripe-user-1', balance: 100 });
  });

  it('credits a payment once even when Stripe sends it under two event ids', async () => {
    for (const eventId of ['evt_same_pi_a', 'evt_same_pi_b']) {
      const body = stripeTokenPackPayment({ eventId, paymentIntentId: 'pi_same', userId: 'stripe-user-2' });
      expect((await stack.postStripe(body, signStripe(body))).status).toBe(200);
    }
    await untilInboxRows(
      stack.db,
      { paymentIntentId: 'pi_same' },
      { status: 'processed', count: 2 },
      'both events to finish',
    );
    const ledger = await ledgerOf(stack.db, 'stripe-user-2', ['reference', 'amount']);
    expect(ledger).toEqual([{ reference: 'stripe:payment:pi_same', amount: 100 }]);
  });

  const now = () => Math.floor(Date.now() / 1000);
  const cases: Array<[string, (body: string) => { body: string; signature: string | null }]> = [
    ['a signature over other bytes', (body) => ({ body, signature: signStripe(`${body} `) })],
    ['a wrong secret', (body) => ({ body, signature: signStripe(body, 'whsec_someone_else') })],
    ['an expired timestamp', (body) => ({ body, signature: signStripe(body, stripeSecret, now() - 301) })],
    // Well past the tolerance (300 s): a future timestamp's distance shrinks while the request is on
    // its way, so 301 was accepted whenever a second boundary fell between signing and checking.
    ['a timestamp in the future', (body) => ({ body, signature: signStripe(body, stripeSecret, now() + 360) })],
    [
      'a tampered body',
      (body) => ({ body: body.replace('"amount_received":499', '"amount_received":999'), signature: signStripe(body) }),
    ],
    ['a missing header', (body) => ({ body, signature: null })],
    [
      'a v0-only header',
      (body) => {
        const v1 = signStripe(body);
        return { body, signature: v1.replace('v1=', 'v0=') };
      },
    ],
    ['garbage in the header', (body) => ({ body, signature: 'not-a-signature' })],
    [
      'a second, future t= in front of a signature made for it',
      (body) => ({ body, signature: `t=${now()},${signStripe(body, stripeSecret, now() + 3_600)}` }),
    ],
    ['a valid header followed by a second t=', (body) => ({ body, signature: `${signStripe(body)},t=${now()}` })],
  ];

  it.each(cases)('rejects %s with 400 and stores nothing', async (_case, make) => {
    const eventId = `evt_rejected_${Math.random().toString(36).slice(2)}`;
    const { body, signature } = make(stripeTokenPackPayment({ eventId }));
    const response = await stack.postStripe(body, signature);
    expect(response.status).toBe(400);
    expect(await response.json()).toEqual({ error: { code: 'invalid_signature', message: expect.any(String) } });
    expect(await rowsFor(eventId)).toHaveLength(0);
  });

  it('accepts a timestamp within the tolerance on either side', async () => {
    for (const [eventId, skew] of [
      ['evt_skew_past', -290],
      ['evt_skew_future', 290],
    ] as const) {
      const body = stripeTokenPackPayment({ eventId });
      const response = await stack.postStripe(body, signStripe(body, stripeSecret, now() + skew));
      expect(response.status).toBe(200);
      expect(await rowsFor(eventId)).toHaveLength(1);
    }
  });

  it('accepts a rotation header carrying signatures for the old and the new secret, and either alone', async () => {
    const crypto = Stripe.createNodeCryptoProvider();
    const sign = (payload: string, secret: string, t: number) => crypto.computeHMACSignature(`${t}.${payload}`, secret);

    const body = stripeTokenPackPayment({ eventId: 'evt_rotation_both' });
    const t = now();
    const both = `t=${t},v1=${sign(body, 'whsec_retired_one', t)},v1=${sign(body, stripeSecret, t)}`;
    expect((await stack.postStripe(body, both)).status).toBe(200);

    const oldOnly = stripeTokenPackPayment({ eventId: 'evt_rotation_old' });
    expect((await stack.postStripe(oldOnly, signStripe(oldOnly, stripeOldSecret))).status).toBe(200);

    const neither = stripeTokenPackPayment({ eventId: 'evt_rotation_neither' });
    const bad = `t=${t},v1=${sign(neither, 'whsec_retired_one', t)},v1=${sign(neither, 'whsec_retired_two', t)}`;
    expect((await stack.postStripe(neither, bad)).status).toBe(400);

    expect(await rowsFor('evt_rotation_both')).toHaveLength(1);
    expect(await rowsFor('evt_rotation_old')).toHaveLength(1);
    expect(await rowsFor('evt_rotation_neither')).toHaveLength(0);
  });

  it('parks a payment whose amount does not cover the pack instead of crediting it', async () => {
    const body = stripeTokenPackPayment({
      eventId: 'evt_underpaid',
      paymentIntentId: 'pi_underpaid',
      userId: 'stripe-cheap',
      amount: 1,
    });
    expect((await stack.postStripe(body, signStripe(body))).status).toBe(200);
    const [row] = await eventually('the event to be parked', async () => {
      const rows = await rowsFor('evt_underpaid');
      return rows[0]?.status === 'failed' ? rows : undefined;
    });
    expect(row).toMatchObject({ attempts: 1, last_error: expect.stringContaining('pack tokens_100 costs 499 usd') });
    expect(await findWallet(stack.db, 'stripe-cheap')).toEqual({ userId: 'stripe-cheap', balance: 0 });
  });

  it('records unhandled event types and ignores them', async () => {
    const body = JSON.stringify({
      id: 'evt_unhandled',
      object: 'event',
      type: 'charge.captured',
      livemode: true,
      data: { object: { id: 'ch_1', object: 'charge', payment_intent: 'pi_refunded' } },
    });
    expect((await stack.postStripe(body, signStripe(body))).status).toBe(200);
    const [row] = await eventually('the event to be ignored', async () => {
      const rows = await rowsFor('evt_unhandled');
      return rows[0]?.status === 'ignored' ? rows : undefined;
    });
    expect(row).toMatchObject({
      livemode: true,
      environment: 'production',
      provider_payment_intent_id: 'pi_refunded',
      outcome_code: 'unhandled_type',
    });
  });
});
