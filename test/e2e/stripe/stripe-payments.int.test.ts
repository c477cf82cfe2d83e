import { eventually, readJson, signStripe, TestStack } from '../../support/stack';
import {
  stripeEventBody,
  stripeId,
  stripePackCheckout,
  stripePackIntent,
  stripeRefundedCharge,
} from '../../support/stripe-events';
import { stripeStateOf } from '../../support/stripe-state';
import { suiteStackWithFakeStripe } from '../../support/suite';

describe('Stripe one-off payments, top-ups and refunds', () => {
  const { stack, fake } = suiteStackWithFakeStripe({ worker: { concurrency: 8 } });

  const post = (body: string) => stack.deliverStripe(body);
  const finished = (eventId: string) => stack.finishedInboxRow('stripe', eventId);

  const packPayment = (paymentIntentId: string, tokens = 100) => ({
    provider_payment_id: paymentIntentId,
    kind: 'token_pack',
    product_id: 'tokens_100',
    amount_minor: 499,
    currency: 'usd',
    status: 'succeeded',
    ledger_reference: `stripe:payment:${paymentIntentId}`,
    tokens_granted: tokens,
    tokens_refunded: 0,
    refund_shortfall: 0,
  });

  it('credits a pack once when its checkout (line items read from the API) and payment_intent.succeeded both arrive', async () => {
    const userId = stripeId('user');
    const customer = stripeId('cus');
    const paymentIntentId = stripeId('pi');
    const sessionId = stripeId('cs');
    const session = stripePackCheckout({
      id: sessionId,
      userId,
      customer,
      paymentIntent: paymentIntentId,
      email: 'b@example.com',
    });
    fake.putCheckoutSession({
      ...session,
      line_items: { object: 'list', data: [{ id: 'li_1', price: { id: 'price_tokens_100' } }] },
    });
    const ids = await Promise.all([
      post(stripeEventBody('checkout.session.completed', session)),
      post(
        stripeEventBody(
          'payment_intent.succeeded',
          stripePackIntent({ id: paymentIntentId, userId, customer, email: 'b@example.com' }),
        ),
      ),
    ]);
    const rows = await Promise.all(ids.map(finished));
    expect(rows.map((row) => row.outcome_code).sort()).toEqual(['already_credited', 'credited']);
    expect(await stripeStateOf(stack.db, userId)).toEqual({
      balance: 100,
      ledger: [
        {
          reference: `stripe:payment:${paymentIntentId}`,
          amount: 100,
          balance_before: 0,
          balance_after: 100,
          reason: 'token_pack_purchase',
        },
      ],
      payments: [packPayment(paymentIntentId)],
      subscriptions: [],
      emails: [{ provider_payment_id: paymentIntentId, to_address: 'b@example.com', status: 'pending' }],
      customers: [customer],
      installments: [],
    });
    expect(fake.requests.some((request) => request.path === `/v1/checkout/sessions/${sessionId}`)).toBe(true);
  });

  it('credits payment_intent.succeeded once when five deliveries of the same payment arrive at once', async () => {
    const userId = stripeId('user');
    const customer = stripeId('cus');
    const paymentIntentId = stripeId('pi');
    const ids = await Promise.all(
      Array.from({ length: 5 }, () =>
        post(stripeEventBody('payment_intent.succeeded', stripePackIntent({ id: paymentIntentId, userId, customer }))),
      ),
    );
    const rows = await Promise.all(ids.map(finished));
    expect(rows.map((row) => row.outcome_code).sort()).toEqual([
      'already_credited',
      'already_credited',
      'already_credited',
      'already_credited',
      'credited',
    ]);
    const state = await stripeStateOf(stack.db, userId);
    expect(state).toMatchObject({ balance: 100, payments: [packPayment(paymentIntentId)], customers: [customer] });
    expect(state.ledger).toHaveLength(1);
    expect(state.emails).toEqual([{ provider_payment_id: paymentIntentId, to_address: null, status: 'pending' }]);
  });

  it('waits for checkout.session.async_payment_succeeded when the session completes unpaid', async () => {
    const userId = stripeId('user');
    const customer = stripeId('cus');
    const paymentIntentId = stripeId('pi');
    const sessionId = stripeId('cs');
    const unpaid = stripePackCheckout({
      id: sessionId,
      userId,
      customer,
      paymentIntent: paymentIntentId,
      paymentStatus: 'unpaid',
    });
    expect(await finished(await post(stripeEventBody('checkout.session.completed', unpaid)))).toMatchObject({
      status: 'ignored',
      outcome_code: 'awaiting_payment',
    });
    expect((await stripeStateOf(stack.db, userId)).balance).toBe(0);
    const paid = { ...unpaid, payment_status: 'paid' };
    fake.putCheckoutSession({ ...paid, line_items: { object: 'list', data: [{ price: { id: 'price_tokens_100' } }] } });
    expect(await finished(await post(stripeEventBody('checkout.session.async_payment_succeeded', paid)))).toMatchObject(
      {
        status: 'processed',
        outcome_code: 'credited',
      },
    );
    expect(await stripeStateOf(stack.db, userId)).toMatchObject({
      balance: 100,
      payments: [packPayment(paymentIntentId)],
    });
  });

  it('credits a top-up once when confirm calls race its payment_intent.succeeded webhook', async () => {
    const userId = stripeId('user');
    const created = await stack.apiRequest(`/v1/users/${userId}/topups`, {
      method: 'POST',
      body: { packId: 'tokens_100' },
    });
    expect(created.status).toBe(201);
    const topup = await readJson(created);
    expect(topup).toEqual({
      reference: expect.stringMatching(/^tu_[0-9a-f]{24}$/),
      clientSecret: expect.any(String),
      status: 'pending',
    });
    const createRequest = fake.requests.find(
      (request) => request.method === 'POST' && request.path === '/v1/payment_intents',
    );
    expect(createRequest).toMatchObject({
      idempotencyKey: `topup-${topup.reference}`,
      form: expect.objectContaining({
        amount: '499',
        currency: 'usd',
        'metadata[user_id]': userId,
        'metadata[pack_id]': 'tokens_100',
        'metadata[topup_reference]': topup.reference,
      }),
    });
    const [intent] = [...fake.paymentIntents.values()].filter(
      (candidate) => (candidate.metadata as Record<string, string>).topup_reference === topup.reference,
    );
    const paymentIntentId = String(intent?.id);

    // Not paid yet: confirm refuses and credits nothing.
    const early = await stack.apiRequest(`/v1/users/${userId}/topups/${topup.reference}/confirm`, { method: 'POST' });
    expect(early.status).toBe(409);
    expect(await readJson(early)).toMatchObject({
      error: { code: 'topup_not_paid' },
      paymentStatus: 'requires_payment_method',
    });

    const paidIntent = fake.setPaymentIntentStatus(paymentIntentId, 'succeeded');
    const [webhookId, ...confirms] = await Promise.all([
      post(stripeEventBody('payment_intent.succeeded', paidIntent)),
      ...Array.from({ length: 3 }, () =>
        stack.apiRequest(`/v1/users/${userId}/topups/${topup.reference}/confirm`, { method: 'POST' }),
      ),
    ]);
    expect(await finished(webhookId as string)).toMatchObject({ status: 'processed' });
    const answers = await Promise.all(
      confirms.map(async (response) => ({
        status: (response as Response).status,
        body: await readJson(response as Response),
      })),
    );
    expect(answers.every((answer) => answer.status === 200 && answer.body.status === 'paid')).toBe(true);
    const again = await readJson(
      await stack.apiRequest(`/v1/users/${userId}/topups/${topup.reference}/confirm`, { method: 'POST' }),
    );
    expect(again).toEqual({ reference: topup.reference, status: 'paid', credited: false, balance: 100 });

    expect(await stripeStateOf(stack.db, userId)).toEqual({
      balance: 100,
      ledger: [
        {
          reference: `stripe:payment:${paymentIntentId}`,
          amount: 100,
          balance_before: 0,
          balance_after: 100,
          reason: 'topup',
        },
      ],
      payments: [{ ...packPayment(paymentIntentId), kind: 'topup' }],
      subscriptions: [],
      emails: [{ provider_payment_id: paymentIntentId, to_address: null, status: 'pending' }],
      customers: [],
      installments: [],
    });
    const row = await stack.db
      .selectFrom('topups')
      .selectAll()
      .where('reference', '=', topup.reference)
      .executeTakeFirstOrThrow();
    expect(row).toMatchObject({ status: 'paid', payment_intent_id: paymentIntentId, user_id: userId, tokens: 100 });
  });

  it('takes a refunded pack back once, never below zero, recording the spent part as a shortfall', async () => {
    const userId = stripeId('user');
    const customer = stripeId('cus');
    const paymentIntentId = stripeId('pi');
    const chargeId = stripeId('ch');
    await finished(
      await post(
        stripeEventBody('payment_intent.succeeded', stripePackIntent({ id: paymentIntentId, userId, customer })),
      ),
    );
    // The user spends 70 of the 100 tokens.
    await stack.postPlainEntry({ userId, reference: `test:spend:${userId}`, amount: -70, reason: 'studio_debit' });
    const refunds = [0, 1].map(() =>
      stripeEventBody('charge.refunded', stripeRefundedCharge({ id: chargeId, paymentIntent: paymentIntentId })),
    );
    const first = await finished(await post(refunds[0] as string));
    const second = await finished(await post(refunds[1] as string));
    expect([first.outcome_code, second.outcome_code]).toEqual(['refunded', 'already_refunded']);
    expect(await stripeStateOf(stack.db, userId)).toEqual({
      balance: 0,
      ledger: [
        {
          reference: `stripe:payment:${paymentIntentId}`,
          amount: 100,
          balance_before: 0,
          balance_after: 100,
          reason: 'token_pack_purchase',
        },
        {
          reference: `test:spend:${userId}`,
          amount: -70,
          balance_before: 100,
          balance_after: 30,
          reason: 'studio_debit',
        },
        {
          reference: `stripe:refund:${chargeId}`,
          amount: -30,
          balance_before: 30,
          balance_after: 0,
          reason: 'stripe_refund',
        },
      ],
      payments: [{ ...packPayment(paymentIntentId), status: 'refunded', tokens_refunded: 30, refund_shortfall: 70 }],
      subscriptions: [],
      emails: [{ provider_payment_id: paymentIntentId, to_address: null, status: 'pending' }],
      customers: [customer],
      installments: [],
    });
  });

  it('takes back a partly refunded pack in proportion, once per refund, never below zero, and the rest when fully refunded', async () => {
    const userId = stripeId('user');
    const customer = stripeId('cus');
    const paymentIntentId = stripeId('pi');
    const chargeId = stripeId('ch');
    await finished(
      await post(
        stripeEventBody('payment_intent.succeeded', stripePackIntent({ id: paymentIntentId, userId, customer })),
      ),
    );
    const spend = (reference: string, amount: number) =>
      stack.postPlainEntry({ userId, reference, amount, reason: 'test_adjustment' });
    const refund = (amountRefunded: number) =>
      stripeEventBody(
        'charge.refunded',
        stripeRefundedCharge({ id: chargeId, paymentIntent: paymentIntentId, amount: 499, amountRefunded }),
      );
    const refundColumnsOf = () =>
      stack.db
        .selectFrom('payments')
        .select(['status', 'amount_refunded_minor', 'tokens_refunded', 'refund_shortfall'])
        .where('provider_payment_id', '=', paymentIntentId)
        .executeTakeFirstOrThrow();
    await spend(`test:spend:${userId}`, -80); // 20 left

    // 200 of 499 refunded: floor(100 × 200 / 499) = 40 owed; 20 taken, 20 short. Redelivered: nothing.
    expect(await finished(await post(refund(200)))).toMatchObject({
      status: 'processed',
      outcome_code: 'partially_refunded',
    });
    expect(await finished(await post(refund(200)))).toMatchObject({ outcome_code: 'already_refunded' });
    expect(await refundColumnsOf()).toEqual({
      status: 'partially_refunded',
      amount_refunded_minor: 200,
      tokens_refunded: 20,
      refund_shortfall: 20,
    });

    // The user gets 50 tokens; a second refund brings the total to 300: floor(30000 / 499) = 60, 20 more owed.
    await spend(`test:gift:${userId}`, 50);
    expect(await finished(await post(refund(300)))).toMatchObject({ outcome_code: 'partially_refunded' });
    // The first refund's event arriving late changes nothing.
    expect(await finished(await post(refund(200)))).toMatchObject({ outcome_code: 'already_refunded' });

    // Refunded in full: the remaining 40 are owed, 30 are left.
    expect(await finished(await post(refund(499)))).toMatchObject({ outcome_code: 'refunded' });
    expect(await finished(await post(refund(499)))).toMatchObject({ outcome_code: 'already_refunded' });

    expect(await refundColumnsOf()).toEqual({
      status: 'refunded',
      amount_refunded_minor: 499,
      tokens_refunded: 70,
      refund_shortfall: 30,
    });
    expect(await stripeStateOf(stack.db, userId)).toEqual({
      balance: 0,
      ledger: [
        {
          reference: `stripe:payment:${paymentIntentId}`,
          amount: 100,
          balance_before: 0,
          balance_after: 100,
          reason: 'token_pack_purchase',
        },
        {
          reference: `test:spend:${userId}`,
          amount: -80,
          balance_before: 100,
          balance_after: 20,
          reason: 'test_adjustment',
        },
        {
          reference: `stripe:refund:${chargeId}:200`,
          amount: -20,
          balance_before: 20,
          balance_after: 0,
          reason: 'stripe_refund',
        },
        {
          reference: `test:gift:${userId}`,
          amount: 50,
          balance_before: 0,
          balance_after: 50,
          reason: 'test_adjustment',
        },
        {
          reference: `stripe:refund:${chargeId}:300`,
          amount: -20,
          balance_before: 50,
          balance_after: 30,
          reason: 'stripe_refund',
        },
        {
          reference: `stripe:refund:${chargeId}`,
          amount: -30,
          balance_before: 30,
          balance_after: 0,
          reason: 'stripe_refund',
        },
      ],
      payments: [{ ...packPayment(paymentIntentId), status: 'refunded', tokens_refunded: 70, refund_shortfall: 30 }],
      subscriptions: [],
      emails: [{ provider_payment_id: paymentIntentId, to_address: null, status: 'pending' }],
      customers: [customer],
      installments: [],
    });
  });

  it('credits a checkout once when the same event is delivered twice 200 ms apart', async () => {
    const userId = stripeId('user');
    const customer = stripeId('cus');
    const paymentIntentId = stripeId('pi');
    const session = stripePackCheckout({
      id: stripeId('cs'),
      userId,
      customer,
      paymentIntent: paymentIntentId,
      email: 'twice@example.com',
    });
    fake.putCheckoutSession({
      ...session,
      line_items: { object: 'list', data: [{ id: 'li_1', price: { id: 'price_tokens_100' } }] },
    });
    const body = stripeEventBody('checkout.session.completed', session);
    const eventId = JSON.parse(body).id as string;
    const first = await stack.postStripe(body, signStripe(body));
    await new Promise((resolve) => setTimeout(resolve, 200));
    const second = await stack.postStripe(body, signStripe(body));
    expect([first.status, second.status]).toEqual([200, 200]);
    expect((await readJson(second)).status).toBe('duplicate');
    expect(await finished(eventId)).toMatchObject({ status: 'processed', outcome_code: 'credited' });
    expect(await stack.inboxRows('stripe', eventId)).toHaveLength(1);
    expect(await stripeStateOf(stack.db, userId)).toEqual({
      balance: 100,
      ledger: [
        {
          reference: `stripe:payment:${paymentIntentId}`,
          amount: 100,
          balance_before: 0,
          balance_after: 100,
          reason: 'token_pack_purchase',
        },
      ],
      payments: [packPayment(paymentIntentId)],
      subscriptions: [],
      emails: [{ provider_payment_id: paymentIntentId, to_address: 'twice@example.com', status: 'pending' }],
      customers: [customer],
      installments: [],
    });
  });

  it('credits nothing when Stripe fails between the local writes of a top-up, and credits once when it answers again', async () => {
    const userId = stripeId('user');
    // Creating the PaymentIntent fails: the pending row stays without an intent and nothing moves.
    fake.failNext(500, { pathIncludes: '/v1/payment_intents' });
    const failed = await stack.apiRequest(`/v1/users/${userId}/topups`, {
      method: 'POST',
      body: { packId: 'tokens_100' },
    });
    expect(failed.status).toBe(502);
    expect(await readJson(failed)).toMatchObject({ error: { code: 'stripe_unavailable' } });
    const orphan = await stack.db
      .selectFrom('topups')
      .selectAll()
      .where('user_id', '=', userId)
      .executeTakeFirstOrThrow();
    expect(orphan).toMatchObject({ status: 'pending', payment_intent_id: null });
    const orphanConfirm = await stack.apiRequest(`/v1/users/${userId}/topups/${orphan.reference}/confirm`, {
      method: 'POST',
    });
    expect(orphanConfirm.status).toBe(409);

    const topup = await readJson(
      await stack.apiRequest(`/v1/users/${userId}/topups`, { method: 'POST', body: { packId: 'tokens_100' } }),
    );
    const row = await stack.db
      .selectFrom('topups')
      .selectAll()
      .where('reference', '=', topup.reference)
      .executeTakeFirstOrThrow();
    fake.setPaymentIntentStatus(String(row.payment_intent_id), 'succeeded');
    // Retrieving the intent fails once (Stripe times out): no credit, the browser retries.
    fake.failNext(503, { pathIncludes: `/v1/payment_intents/${row.payment_intent_id}` });
    const unavailable = await stack.apiRequest(`/v1/users/${userId}/topups/${topup.reference}/confirm`, {
      method: 'POST',
    });
    expect(unavailable.status).toBe(502);
    expect((await stripeStateOf(stack.db, userId)).ledger).toEqual([]);
    const confirmed = await stack.apiRequest(`/v1/users/${userId}/topups/${topup.reference}/confirm`, {
      method: 'POST',
    });
    expect(await readJson(confirmed)).toEqual({
      reference: topup.reference,
      status: 'paid',
      credited: true,
      balance: 100,
    });
    const state = await stripeStateOf(stack.db, userId);
    expect(state.ledger).toEqual([
      {
        reference: `stripe:payment:${row.payment_intent_id}`,
        amount: 100,
        balance_before: 0,
        balance_after: 100,
        reason: 'topup',
      },
    ]);
    expect(state.payments).toEqual([
      expect.objectContaining({ provider_payment_id: row.payment_intent_id, kind: 'topup' }),
    ]);
  });

  it('creates one PaymentIntent and credits a top-up once when Stripe times out after creating its intent (the answer is lost)', async () => {
    const userId = stripeId('user');
    // Stripe takes longer than the client's timeout (5 s) to answer the create, then creates the
    // intent anyway: the answer never reaches Tally.
    fake.stallNextMs = 6_000;
    const lost = await stack.apiRequest(`/v1/users/${userId}/topups`, {
      method: 'POST',
      body: { packId: 'tokens_100' },
    });
    expect(lost.status).toBe(502);
    expect(await readJson(lost)).toMatchObject({ error: { code: 'stripe_unavailable' } });
    const orphan = await stack.db
      .selectFrom('topups')
      .selectAll()
      .where('user_id', '=', userId)
      .executeTakeFirstOrThrow();
    expect(orphan).toMatchObject({ status: 'pending', payment_intent_id: null });
    const intentsOfTopup = () =>
      [...fake.paymentIntents.values()].filter(
        (intent) => (intent.metadata as Record<string, string>).topup_reference === orphan.reference,
      );
    const [created] = await eventually('Stripe to create the intent after the timeout', async () =>
      intentsOfTopup().length > 0 ? intentsOfTopup() : undefined,
    );
    const paymentIntentId = String(created?.id);
    const key = `topup-${orphan.reference}`;
    expect(
      fake.requests.filter((request) => request.method === 'POST' && request.path === '/v1/payment_intents'),
    ).toContainEqual(expect.objectContaining({ idempotencyKey: key }));

    // The create retried with the top-up's idempotency key gets the same intent: no second one.
    const stripe = stack.ports.stripe;
    if (!stripe) throw new Error('the stack has no Stripe port');
    const retried = await stripe.createPaymentIntent(
      {
        amountMinor: 499,
        currency: 'usd',
        metadata: { user_id: userId, pack_id: 'tokens_100', topup_reference: orphan.reference },
      },
      { idempotencyKey: key },
    );
    expect(retried.id).toBe(paymentIntentId);
    expect(intentsOfTopup()).toHaveLength(1);
    expect(fake.requests.filter((request) => request.idempotencyKey === key)).toHaveLength(2);
    expect((await stripeStateOf(stack.db, userId)).ledger).toEqual([]);

    // The customer pays that intent anyway; its webhook, delivered twice, credits the top-up once,
    // and the confirm of the top-up whose create "failed" finds it paid.
    const paid = fake.setPaymentIntentStatus(paymentIntentId, 'succeeded');
    for (const body of [0, 1].map(() => stripeEventBody('payment_intent.succeeded', paid))) {
      expect(await finished(await post(body))).toMatchObject({
        status: 'processed',
        outcome_code: expect.stringMatching(/^(credited|already_credited)$/),
      });
    }
    const confirmed = await stack.apiRequest(`/v1/users/${userId}/topups/${orphan.reference}/confirm`, {
      method: 'POST',
    });
    expect(await readJson(confirmed)).toEqual({
      reference: orphan.reference,
      status: 'paid',
      credited: false,
      balance: 100,
    });
    expect(
      await stack.db
        .selectFrom('topups')
        .select(['reference', 'status', 'payment_intent_id'])
        .where('user_id', '=', userId)
        .execute(),
    ).toEqual([{ reference: orphan.reference, status: 'paid', payment_intent_id: paymentIntentId }]);
    expect(await stripeStateOf(stack.db, userId)).toEqual({
      balance: 100,
      ledger: [
        {
          reference: `stripe:payment:${paymentIntentId}`,
          amount: 100,
          balance_before: 0,
          balance_after: 100,
          reason: 'topup',
        },
      ],
      payments: [
        {
          ...packPayment(paymentIntentId),
          kind: 'topup',
          ledger_reference: `stripe:payment:${paymentIntentId}`,
        },
      ],
      subscriptions: [],
      emails: [{ provider_payment_id: paymentIntentId, to_address: null, status: 'pending' }],
      customers: [],
      installments: [],
    });
  }, 30_000);

  it('keeps a Stripe customer mapped to its first user when a payment names another, and reports it on the outcome', async () => {
    const [firstUser, secondUser] = [stripeId('user'), stripeId('user')];
    const customer = stripeId('cus');
    const [firstIntent, secondIntent] = [stripeId('pi'), stripeId('pi')];
    const first = await finished(
      await post(
        stripeEventBody('payment_intent.succeeded', stripePackIntent({ id: firstIntent, userId: firstUser, customer })),
      ),
    );
    expect(first).toMatchObject({ outcome_code: 'credited', outcome_detail: 'credited 100 tokens (tokens_100)' });
    const second = await finished(
      await post(
        stripeEventBody(
          'payment_intent.succeeded',
          stripePackIntent({ id: secondIntent, userId: secondUser, customer }),
        ),
      ),
    );
    // The pack is the second user's (the intent says so); the customer stays the first user's.
    expect(second).toMatchObject({
      status: 'processed',
      outcome_code: 'credited',
      outcome_detail: `credited 100 tokens (tokens_100); customer ${customer} stays mapped to user ${firstUser}, not ${secondUser}`,
    });
    expect(
      await stack.db
        .selectFrom('stripe_customers')
        .select(['customer_id', 'user_id'])
        .where('customer_id', '=', customer)
        .execute(),
    ).toEqual([{ customer_id: customer, user_id: firstUser }]);
    expect(await stripeStateOf(stack.db, secondUser)).toEqual({
      balance: 100,
      ledger: [
        {
          reference: `stripe:payment:${secondIntent}`,
          amount: 100,
          balance_before: 0,
          balance_after: 100,
          reason: 'token_pack_purchase',
        },
      ],
      payments: [packPayment(secondIntent)],
      subscriptions: [],
      emails: [{ provider_payment_id: secondIntent, to_address: null, status: 'pending' }],
      customers: [],
      installments: [],
    });
    expect(await stripeStateOf(stack.db, firstUser)).toMatchObject({ balance: 100, customers: [customer] });
  });

  it('answers 400 for a pack Stripe does not sell and 404 for a top-up reference the user does not have, creating nothing', async () => {
    const userId = stripeId('user');
    const requestsBefore = fake.requests.length;
    const unknownPack = await stack.apiRequest(`/v1/users/${userId}/topups`, {
      method: 'POST',
      body: { packId: 'tokens_not_in_catalog' },
    });
    expect(unknownPack.status).toBe(400);
    expect(await readJson(unknownPack)).toMatchObject({ error: { code: 'unknown_pack' } });

    const missing = await stack.apiRequest(`/v1/users/${userId}/topups/tu_${'0'.repeat(24)}/confirm`, {
      method: 'POST',
    });
    expect(missing.status).toBe(404);
    expect(await readJson(missing)).toMatchObject({ error: { code: 'topup_not_found' } });

    // Another user's top-up is not found either.
    const owner = stripeId('user');
    const theirs = await readJson(
      await stack.apiRequest(`/v1/users/${owner}/topups`, { method: 'POST', body: { packId: 'tokens_100' } }),
    );
    const notYours = await stack.apiRequest(`/v1/users/${userId}/topups/${theirs.reference}/confirm`, {
      method: 'POST',
    });
    expect(notYours.status).toBe(404);
    expect(await readJson(notYours)).toMatchObject({ error: { code: 'topup_not_found' } });

    expect(await stack.db.selectFrom('topups').select('reference').where('user_id', '=', userId).execute()).toEqual([]);
    // Only the owner's create reached Stripe.
    expect(fake.requests.slice(requestsBefore).map((request) => [request.method, request.path])).toEqual([
      ['POST', '/v1/payment_intents'],
    ]);
    expect(await stripeStateOf(stack.db, userId)).toMatchObject({ balance: 0, ledger: [], payments: [] });
  });

  it('answers 503 not_configured for top-ups when the Stripe API is not configured', async () => {
    const bare = await TestStack.start();
    try {
      const userId = stripeId('user');
      const created = await bare.apiRequest(`/v1/users/${userId}/topups`, {
        method: 'POST',
        body: { packId: 'tokens_100' },
      });
      expect(created.status).toBe(503);
      expect(await readJson(created)).toMatchObject({ error: { code: 'not_configured' } });
      expect(await bare.db.selectFrom('topups').select('reference').execute()).toEqual([]);

      // A top-up started while Stripe was configured cannot be confirmed without it.
      const reference = `tu_${'a'.repeat(24)}`;
      await bare.db.insertInto('users').values({ id: userId }).execute();
      await bare.db
        .insertInto('topups')
        .values({ reference, user_id: userId, pack_id: 'tokens_100', tokens: 100, amount_minor: 499, currency: 'usd' })
        .execute();
      const confirm = await bare.apiRequest(`/v1/users/${userId}/topups/${reference}/confirm`, { method: 'POST' });
      expect(confirm.status).toBe(503);
      expect(await readJson(confirm)).toMatchObject({ error: { code: 'not_configured' } });
      expect(await bare.db.selectFrom('topups').select(['reference', 'status']).execute()).toEqual([
        { reference, status: 'pending' },
      ]);
      expect(await stripeStateOf(bare.db, userId)).toMatchObject({ balance: 0, ledger: [], payments: [] });
    } finally {
      await bare.stop();
    }
  });

  it('refuses a checkout event with an invalid signature and stores nothing', async () => {
    const userId = stripeId('user');
    const body = stripeEventBody(
      'checkout.session.completed',
      stripePackCheckout({ id: stripeId('cs'), userId, customer: stripeId('cus'), paymentIntent: stripeId('pi') }),
    );
    const response = await stack.postStripe(body, signStripe(body, 'whsec_not_ours'));
    expect(response.status).toBe(400);
    expect(await stack.inboxRows('stripe', JSON.parse(body).id)).toEqual([]);
    expect(await stripeStateOf(stack.db, userId)).toMatchObject({ balance: 0, ledger: [], payments: [] });
  });
});
