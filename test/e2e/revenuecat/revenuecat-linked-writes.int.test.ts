import { revenueCatTokenPurchase } from '../../support/events';
import { daysFromNow } from '../../support/fakes/fake-revenuecat';
import { ledgerOf, purchasedLot } from '../../support/ledger';
import { type Json, readJson } from '../../support/stack';
import { stripeEventBody } from '../../support/stripe-events';
import { suiteStackWithFakes } from '../../support/suite';

/**
 * The write side of linked ids: every /v1/users/{userId}/… route resolves the path's id to its
 * canonical user once (apps/api createUserRoutes), so spending (AI Studio) and paying (Stripe
 * top-ups) under an anonymous id RevenueCat linked to a user move that user's wallet — the one
 * `GET …/wallet` by the anonymous id shows — and never an empty wallet of the anonymous id's own.
 * The links are made by real RevenueCat webhooks through ingest and the real worker.
 */

describe('RevenueCat linked ids: studio requests and top-ups under any linked id spend and credit one user', () => {
  // Inbox and relay only: studio requests stay `received`, so balances show only what the API did.
  const { stack, stripe, revenueCat } = suiteStackWithFakes({
    verifyRevenueCatPurchases: true,
    revenueCatTimeoutMs: 5_000,
    worker: {},
  });

  /**
   * Delivers a RevenueCat pack purchase through ingest and waits until the worker processed it;
   * the purchase is listed at the fake RevenueCat first (verification is on, as in production).
   */
  const deliver = async (body: string) => {
    const event = JSON.parse(body).event;
    revenueCat.addNonSubscription(event.app_user_id, event.product_id, event.transaction_id);
    const response = await stack.postRevenueCat(body);
    expect(response.status).toBe(200);
    const row = await stack.finishedInboxRow('revenuecat', JSON.parse(body).event.id);
    expect(row).toMatchObject({ status: 'processed', outcome_code: 'credited' });
    return row;
  };
  /**
   * A pack bought under the anonymous id of a RevenueCat customer first known as `known`: its read
   * confirms both ids, which are linked to `known` (rule 3, or rule 1 once `known` is linked).
   */
  const linkByPurchase = (eventId: string, anonymous: string, known: string) => {
    revenueCat.setSubscriber(known, {}, [anonymous]);
    return deliver(
      revenueCatTokenPurchase({
        id: eventId,
        userId: anonymous,
        originalAppUserId: anonymous,
        aliases: [anonymous, known],
      }),
    );
  };
  const api = async (path: string, options: { method?: string; body?: unknown } = {}) => {
    const response = await stack.apiRequest(path, options);
    return { status: response.status, body: await readJson(response) };
  };
  const studioPost = (userId: string, body: unknown) =>
    api(`/v1/users/${encodeURIComponent(userId)}/studio/requests`, { method: 'POST', body });
  const fullSong = { kind: 'music', full: true, input: { prompt: 'a song' } };
  const usersAmong = async (ids: string[]) =>
    (await stack.db.selectFrom('users').select('id').where('id', 'in', ids).execute()).map((user) => user.id).sort();
  /** The PaymentIntent the fake Stripe holds for a top-up (its metadata names the reference). */
  const intentOfTopup = (reference: string) => {
    const intent = [...stripe.paymentIntents.values()].find(
      (candidate) => (candidate.metadata as Record<string, string>).topup_reference === reference,
    );
    if (!intent) throw new Error(`fake Stripe holds no payment intent for top-up ${reference}`);
    return { id: String(intent.id), metadata: intent.metadata as Record<string, string> };
  };
  const studioRowsOf = (ids: string[]) =>
    stack.db
      .selectFrom('studio_requests')
      .select(['public_id', 'user_id', 'free_tier', 'tokens_charged'])
      .where('user_id', 'in', ids)
      .orderBy('id')
      .execute();

  it('a studio request under an anonymous id linked to a user debits that user, shares its free allowance and shows in its list', async () => {
    const known = 'linked-writes-spender';
    const anonymous = '$RCAnonymousID:00000000000d0001';
    await linkByPurchase('rc-linked-writes-spend', anonymous, known);
    expect(await api(`/v1/users/${encodeURIComponent(anonymous)}/wallet`)).toEqual({
      status: 200,
      body: {
        userId: anonymous,
        balance: 100,
        held: 0,
        available: 100,
        debt: 0,
        lots: [purchasedLot('revenuecat:event:rc-linked-writes-spend', 100)],
      },
    });

    // Three songs at once, two under the anonymous id and one under the known id: the user's two
    // free songs of the day go to two of them, whichever id they came by; the third pays.
    const concurrent = await Promise.all([
      studioPost(anonymous, fullSong),
      studioPost(anonymous, fullSong),
      studioPost(known, fullSong),
    ]);
    expect(concurrent.map((answer) => answer.status)).toEqual([202, 202, 202]);
    const freeOnes = concurrent.filter((answer) => answer.body.freeTier === true);
    const [paidFirst] = concurrent.filter((answer) => answer.body.freeTier === false).map((answer) => answer.body);
    expect(freeOnes).toHaveLength(2);
    expect(paidFirst).toMatchObject({ tokensCharged: 15, freeTier: false });

    // The wallet the anonymous id reads holds 85: the next song under it is paid from there (not
    // a 402 from an empty wallet of its own).
    const paidSecond = await studioPost(anonymous, fullSong);
    expect(paidSecond).toEqual({
      status: 202,
      body: { id: expect.any(String), status: 'received', tokensCharged: 15, freeTier: false },
    });

    expect(await ledgerOf(stack.db, known)).toEqual([
      {
        reference: 'revenuecat:event:rc-linked-writes-spend',
        amount: 100,
        balance_before: 0,
        balance_after: 100,
        reason: 'token_pack_purchase',
      },
      {
        reference: `studio:${paidFirst?.id}:debit`,
        amount: -15,
        balance_before: 100,
        balance_after: 85,
        reason: 'studio_music_full',
      },
      {
        reference: `studio:${paidSecond.body.id}:debit`,
        amount: -15,
        balance_before: 85,
        balance_after: 70,
        reason: 'studio_music_full',
      },
    ]);
    // Every request is filed under the known user; the anonymous id has no user, wallet or ledger.
    const ids = [...concurrent.map((answer) => answer.body.id), paidSecond.body.id];
    expect(await studioRowsOf([known, anonymous])).toEqual(
      expect.arrayContaining(ids.map((id) => expect.objectContaining({ public_id: id, user_id: known }))),
    );
    expect(await studioRowsOf([known, anonymous])).toHaveLength(4);
    expect(await usersAmong([known, anonymous])).toEqual([known]);
    expect(await ledgerOf(stack.db, anonymous)).toEqual([]);
    expect((await api(`/v1/users/${encodeURIComponent(anonymous)}/wallet`)).body).toEqual({
      userId: anonymous,
      balance: 70,
      held: 0,
      available: 70,
      debt: 0,
      lots: [purchasedLot('revenuecat:event:rc-linked-writes-spend', 100, 70)],
    });

    // Both ids list the same four requests, newest first, filed under the known user, and page alike.
    const byAnonymous = await api(`/v1/users/${encodeURIComponent(anonymous)}/studio/requests`);
    expect(byAnonymous.status).toBe(200);
    expect(byAnonymous.body).toMatchObject({ userId: anonymous, nextCursor: null });
    expect(byAnonymous.body.requests.map((request: Json) => [request.id, request.userId])).toEqual(
      [...(await studioRowsOf([known]))].reverse().map((row) => [row.public_id, known]),
    );
    const byKnown = await api(`/v1/users/${known}/studio/requests`);
    expect(byKnown.body).toEqual({ ...byAnonymous.body, userId: known });
    const firstPage = await api(`/v1/users/${encodeURIComponent(anonymous)}/studio/requests?limit=3`);
    const secondPage = await api(
      `/v1/users/${encodeURIComponent(anonymous)}/studio/requests?limit=3&cursor=${firstPage.body.nextCursor}`,
    );
    expect([...firstPage.body.requests, ...secondPage.body.requests]).toEqual(byAnonymous.body.requests);
    for (const id of ids) {
      const one = await api(`/v1/users/${encodeURIComponent(anonymous)}/studio/requests/${id}`);
      expect(one).toMatchObject({ status: 200, body: { id, userId: known, status: 'received' } });
      expect((await api(`/v1/users/${known}/studio/requests/${id}`)).body).toEqual(one.body);
    }
  });

  it('a top-up started and confirmed under an anonymous id linked to a user credits that user once', async () => {
    const known = 'linked-writes-topup';
    const anonymous = '$RCAnonymousID:00000000000d0002';
    await linkByPurchase('rc-linked-writes-topup', anonymous, known);

    const created = await api(`/v1/users/${encodeURIComponent(anonymous)}/topups`, {
      method: 'POST',
      body: { packId: 'tokens_100' },
    });
    expect(created).toEqual({
      status: 201,
      body: {
        reference: expect.stringMatching(/^tu_[0-9a-f]{24}$/),
        clientSecret: expect.any(String),
        status: 'pending',
      },
    });
    const reference = created.body.reference as string;
    const intent = intentOfTopup(reference);
    // The intent names the known user, so the payment_intent.succeeded webhook credits it too.
    expect(intent.metadata).toEqual({ user_id: known, pack_id: 'tokens_100', topup_reference: reference });
    const paymentIntentId = intent.id;

    // Paid: the webhook and confirms under both ids race; exactly one credits.
    const paid = stripe.setPaymentIntentStatus(paymentIntentId, 'succeeded');
    const confirmPath = (id: string) => `/v1/users/${encodeURIComponent(id)}/topups/${reference}/confirm`;
    const [webhookId, ...confirms] = await Promise.all([
      stack.deliverStripe(stripeEventBody('payment_intent.succeeded', paid)),
      api(confirmPath(anonymous), { method: 'POST' }),
      api(confirmPath(anonymous), { method: 'POST' }),
      api(confirmPath(known), { method: 'POST' }),
    ]);
    expect(await stack.finishedInboxRow('stripe', webhookId as string)).toMatchObject({ status: 'processed' });
    for (const confirm of confirms) {
      expect(confirm).toMatchObject({ status: 200, body: { reference, status: 'paid' } });
    }
    expect(await api(confirmPath(anonymous), { method: 'POST' })).toEqual({
      status: 200,
      body: { reference, status: 'paid', credited: false, balance: 200 },
    });

    expect(await ledgerOf(stack.db, known)).toEqual([
      {
        reference: 'revenuecat:event:rc-linked-writes-topup',
        amount: 100,
        balance_before: 0,
        balance_after: 100,
        reason: 'token_pack_purchase',
      },
      {
        reference: `stripe:payment:${paymentIntentId}`,
        amount: 100,
        balance_before: 100,
        balance_after: 200,
        reason: 'topup',
      },
    ]);
    expect(
      await stack.db
        .selectFrom('topups')
        .select(['user_id', 'status', 'payment_intent_id'])
        .where('reference', '=', reference)
        .execute(),
    ).toEqual([{ user_id: known, status: 'paid', payment_intent_id: paymentIntentId }]);
    expect(await usersAmong([known, anonymous])).toEqual([known]);
    expect(await ledgerOf(stack.db, anonymous)).toEqual([]);
    expect((await api(`/v1/users/${encodeURIComponent(anonymous)}/wallet`)).body).toEqual({
      userId: anonymous,
      balance: 200,
      held: 0,
      available: 200,
      debt: 0,
      lots: [
        purchasedLot('revenuecat:event:rc-linked-writes-topup', 100),
        purchasedLot(`stripe:payment:${paymentIntentId}`, 100),
      ],
    });
  });

  it('a studio request made under an anonymous id before RevenueCat linked it stays readable by that id and is listed as the user’s', async () => {
    const known = 'linked-writes-earlier';
    const anonymous = '$RCAnonymousID:00000000000d0003';
    // The known user exists and is linked to itself before the anonymous id shows up.
    await deliver(revenueCatTokenPurchase({ id: 'rc-linked-writes-earlier-1', userId: known }));
    // The app, not logged in yet, makes a free request under the anonymous id: its own user.
    const early = await studioPost(anonymous, { kind: 'image_edit', input: { prompt: 'before login' } });
    expect(early).toMatchObject({ status: 202, body: { freeTier: true } });
    expect(await usersAmong([known, anonymous])).toEqual([anonymous, known].sort());

    // RevenueCat then names both ids: the anonymous id is linked to the known user (rule 1).
    await linkByPurchase('rc-linked-writes-earlier-2', anonymous, known);
    const later = await studioPost(anonymous, { kind: 'image_edit', input: { prompt: 'after login' } });
    expect(later).toMatchObject({ status: 202, body: { freeTier: true } });
    expect(await studioRowsOf([known, anonymous])).toEqual([
      { public_id: early.body.id, user_id: anonymous, free_tier: true, tokens_charged: 0 },
      { public_id: later.body.id, user_id: known, free_tier: true, tokens_charged: 0 },
    ]);

    for (const id of [anonymous, known]) {
      const path = `/v1/users/${encodeURIComponent(id)}/studio/requests`;
      expect(await api(`${path}/${early.body.id}`)).toMatchObject({
        status: 200,
        body: { id: early.body.id, userId: anonymous },
      });
      const list = await api(path);
      expect(list.body.requests.map((request: Json) => [request.id, request.userId])).toEqual([
        [later.body.id, known],
        [early.body.id, anonymous],
      ]);
      // The earlier request is a valid cursor for either id.
      expect((await api(`${path}?limit=1&cursor=${later.body.id}`)).body.requests).toEqual([list.body.requests[1]]);
    }
  });

  it('a top-up started under an anonymous id before RevenueCat linked it is confirmed by either id and credits the wallet it was started for, once', async () => {
    const known = 'linked-writes-earlier-topup';
    const anonymous = '$RCAnonymousID:00000000000d0006';
    await deliver(revenueCatTokenPurchase({ id: 'rc-linked-writes-earlier-topup-1', userId: known }));
    const created = await api(`/v1/users/${encodeURIComponent(anonymous)}/topups`, {
      method: 'POST',
      body: { packId: 'tokens_100' },
    });
    expect(created.status).toBe(201);
    const reference = created.body.reference as string;
    const intent = intentOfTopup(reference);
    expect(intent.metadata.user_id).toBe(anonymous);
    await linkByPurchase('rc-linked-writes-earlier-topup-2', anonymous, known);
    stripe.setPaymentIntentStatus(intent.id, 'succeeded');

    // The top-up is the user's by either id; it credits the wallet the intent names (a link never
    // moves tokens between wallets), and the answer is that wallet's balance.
    const confirmPath = (id: string) => `/v1/users/${encodeURIComponent(id)}/topups/${reference}/confirm`;
    expect(await api(confirmPath(anonymous), { method: 'POST' })).toEqual({
      status: 200,
      body: { reference, status: 'paid', credited: true, balance: 100 },
    });
    expect(await api(confirmPath(known), { method: 'POST' })).toEqual({
      status: 200,
      body: { reference, status: 'paid', credited: false, balance: 100 },
    });
    expect(await ledgerOf(stack.db, anonymous)).toEqual([
      {
        reference: `stripe:payment:${intent.id}`,
        amount: 100,
        balance_before: 0,
        balance_after: 100,
        reason: 'topup',
      },
    ]);
    expect((await ledgerOf(stack.db, known)).map((entry) => [entry.reference, entry.balance_after])).toEqual([
      ['revenuecat:event:rc-linked-writes-earlier-topup-1', 100],
      ['revenuecat:event:rc-linked-writes-earlier-topup-2', 200],
    ]);
  });

  it('an on-demand subscription sync under an anonymous id reads and updates the linked user', async () => {
    const known = 'linked-writes-subscriber';
    const anonymous = '$RCAnonymousID:00000000000d0004';
    await linkByPurchase('rc-linked-writes-sync', anonymous, known);
    revenueCat.setSubscriber(known, { 'premium.monthly': { expires_date: daysFromNow(9), store: 'app_store' } }, [
      anonymous,
    ]);

    const sync = await api(`/v1/users/${encodeURIComponent(anonymous)}/subscription/sync`, { method: 'POST' });
    expect(sync).toEqual({
      status: 200,
      body: {
        userId: anonymous,
        result: 'changed',
        subscription: {
          planId: 'premium',
          status: 'active',
          expiresAt: expect.any(String),
          store: 'app_store',
          autoRenew: expect.any(Boolean),
        },
      },
    });
    expect(revenueCat.unknownRequested).toEqual([]);
    const subscriptions = await stack.db
      .selectFrom('subscriptions')
      .select(['user_id', 'plan_id', 'status'])
      .where('user_id', 'in', [known, anonymous])
      .execute();
    expect(subscriptions).toEqual([{ user_id: known, plan_id: 'premium', status: 'active' }]);
    expect(await api(`/v1/users/${known}/subscription`)).toMatchObject({
      status: 200,
      body: { userId: known, planId: 'premium', status: 'active' },
    });
  });

  it('an id nobody linked is its own user, as before: its requests and top-ups stay its own and no other user reads them', async () => {
    const loner = 'linked-writes-unlinked';
    const other = 'linked-writes-other';
    const otherAnonymous = '$RCAnonymousID:00000000000d0005';
    await linkByPurchase('rc-linked-writes-other', otherAnonymous, other);

    const request = await studioPost(loner, { kind: 'image_edit', input: { prompt: 'nobody links me' } });
    expect(request).toMatchObject({ status: 202, body: { tokensCharged: 0, freeTier: true } });
    expect(await studioRowsOf([loner])).toEqual([
      { public_id: request.body.id, user_id: loner, free_tier: true, tokens_charged: 0 },
    ]);
    expect(await api(`/v1/users/${loner}/studio/requests/${request.body.id}`)).toMatchObject({
      status: 200,
      body: { id: request.body.id, userId: loner },
    });
    expect((await api(`/v1/users/${loner}/studio/requests`)).body).toMatchObject({
      userId: loner,
      requests: [expect.objectContaining({ id: request.body.id })],
    });

    const topup = await api(`/v1/users/${loner}/topups`, { method: 'POST', body: { packId: 'tokens_100' } });
    expect(topup.status).toBe(201);
    const reference = topup.body.reference as string;
    const intent = intentOfTopup(reference);
    expect(intent.metadata.user_id).toBe(loner);
    stripe.setPaymentIntentStatus(intent.id, 'succeeded');

    // Another user, by either of its ids, finds neither the request nor the top-up.
    for (const id of [other, otherAnonymous]) {
      expect(await api(`/v1/users/${encodeURIComponent(id)}/studio/requests/${request.body.id}`)).toMatchObject({
        status: 404,
      });
      expect((await api(`/v1/users/${encodeURIComponent(id)}/studio/requests`)).body.requests).toEqual([]);
      expect(await api(`/v1/users/${encodeURIComponent(id)}/topups/${reference}/confirm`, { method: 'POST' })).toEqual({
        status: 404,
        body: { error: { code: 'topup_not_found', message: expect.any(String) } },
      });
    }
    expect(await api(`/v1/users/${loner}/topups/${reference}/confirm`, { method: 'POST' })).toEqual({
      status: 200,
      body: { reference, status: 'paid', credited: true, balance: 100 },
    });
    expect(await ledgerOf(stack.db, loner)).toEqual([
      {
        reference: `stripe:payment:${intent.id}`,
        amount: 100,
        balance_before: 0,
        balance_after: 100,
        reason: 'topup',
      },
    ]);
    expect((await ledgerOf(stack.db, other)).map((entry) => entry.reference)).toEqual([
      'revenuecat:event:rc-linked-writes-other',
    ]);
    expect(await api(`/v1/users/${loner}/wallet`)).toEqual({
      status: 200,
      body: {
        userId: loner,
        balance: 100,
        held: 0,
        available: 100,
        debt: 0,
        lots: [purchasedLot(`stripe:payment:${intent.id}`, 100)],
      },
    });
    expect(await api(`/v1/users/${'x'.repeat(256)}/studio/requests`)).toMatchObject({
      status: 400,
      body: { error: { code: 'invalid_request' } },
    });
  });
});
