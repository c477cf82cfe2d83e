import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import path from 'node:path';
import { promisify } from 'node:util';
import type { Provider } from '@tally/billing-core';
import { revenueCatTokenPurchase, stripeTokenPackPayment } from '../../support/events';
import { daysFromNow } from '../../support/fakes/fake-revenuecat';
import { revenueCatSubscriptionEvent } from '../../support/revenuecat-events';
import { appKey, eventually, type Json, readJson, signStripe, TestStack } from '../../support/stack';
import {
  stripeAnnualInvoice,
  stripeEventBody,
  stripePackIntent,
  stripeRefundedCharge,
  stripeSubscription,
} from '../../support/stripe-events';
import { suiteStackWithFakes } from '../../support/suite';

const root = path.resolve(__dirname, '../../..');
const cli = path.join(root, 'apps', 'cli', 'dist', 'main.js');

describe('the support view: GET /admin/users/{userId} and tally user <id>', () => {
  let stack: TestStack;
  const userId = 'support-user';

  beforeAll(async () => {
    stack = await TestStack.start();
    stack.startWorker();
    // A credit from each provider, an event parked for good (unknown pack), and another user's event.
    await stack.postRevenueCat(revenueCatTokenPurchase({ id: 'rc-support-1', userId }));
    // Credited before the Stripe payment is sent, so the ledger's order (asserted below) is fixed:
    // the worker runs jobs concurrently and the user's lock only serialises, it does not order.
    await eventually('the RevenueCat credit', async () =>
      stack.db
        .selectFrom('ledger_entries')
        .select('id')
        .where('reference', '=', 'revenuecat:event:rc-support-1')
        .executeTakeFirst(),
    );
    const paid = stripeTokenPackPayment({ eventId: 'evt_support_paid', paymentIntentId: 'pi_support_paid', userId });
    await stack.postStripe(paid, signStripe(paid));
    const unknownPack = stripeTokenPackPayment({
      eventId: 'evt_support_unknown_pack',
      paymentIntentId: 'pi_support_unknown_pack',
      userId,
      packId: 'no_such_pack',
    });
    await stack.postStripe(unknownPack, signStripe(unknownPack));
    await stack.postRevenueCat(revenueCatTokenPurchase({ id: 'rc-support-other', userId: 'someone-else' }));
    await eventually('every event to finish', async () => {
      const rows = await stack.db.selectFrom('inbox_events').select('status').execute();
      return rows.length === 4 && rows.every((row) => row.status !== 'received' && row.status !== 'processing');
    });
    await stack.stopWorkers();
  });
  afterAll(() => stack.stop());

  it('gives events with errors first, the ledger with its balance, linked ids and empty sections in one call', async () => {
    const response = await stack.apiRequest(`/admin/users/${userId}`);
    expect(response.status).toBe(200);
    const view: Json = await readJson(response);

    expect(Object.keys(view).sort()).toEqual(
      [
        'canonicalUserId',
        'disputes',
        'events',
        'holds',
        'installments',
        'ledger',
        'linkedIds',
        'payments',
        'refunds',
        'studioRequests',
        'subscription',
        'topups',
        'userId',
        'wallet',
      ].sort(),
    );
    expect(view.userId).toBe(userId);
    expect(view.wallet).toEqual({
      balance: 200,
      held: 0,
      available: 200,
      debt: 0,
      debts: [],
      createdAt: expect.any(String),
      lots: [
        expect.objectContaining({
          source: 'revenuecat:event:rc-support-1',
          amount: 100,
          remaining: 100,
          expiresAt: null,
        }),
        expect.objectContaining({
          source: 'stripe:payment:pi_support_paid',
          amount: 100,
          remaining: 100,
          expiresAt: null,
        }),
      ],
    });

    // Parked first, then the newest; another user's event is not there; no raw bodies.
    expect(view.events.total).toBe(3);
    expect(view.events.truncated).toBe(false);
    expect(
      view.events.items.map((event: Json) => [
        event.providerEventId,
        event.status,
        event.attention,
        event.outcome.code,
      ]),
    ).toEqual([
      ['evt_support_unknown_pack', 'failed', 'parked', 'invalid_event'],
      ['evt_support_paid', 'processed', 'none', 'credited'],
      ['rc-support-1', 'processed', 'none', 'credited'],
    ]);
    expect(view.events.items[0].lastError).toContain('no_such_pack');
    expect(view.events.items.every((event: Json) => !('rawBody' in event) && !('raw_body' in event))).toBe(true);

    expect(view.ledger).toMatchObject({ total: 2, truncated: false, sum: 200, matchesBalance: true });
    expect(
      view.ledger.entries.map((entry: Json) => [
        entry.reference,
        entry.amount,
        entry.balanceBefore,
        entry.balanceAfter,
      ]),
    ).toEqual([
      ['stripe:payment:pi_support_paid', 100, 100, 200],
      ['revenuecat:event:rc-support-1', 100, 0, 100],
    ]);

    expect(view.canonicalUserId).toBe(userId);
    expect(view.subscription).toBeNull();
    expect(view.payments).toEqual([
      expect.objectContaining({ providerPaymentId: 'pi_support_paid', status: 'succeeded', tokensGranted: 100 }),
    ]);
    expect([view.refunds, view.topups, view.installments]).toEqual([[], [], []]);
    expect(view.studioRequests).toEqual({ items: [], total: 0, truncated: false });
    expect(view.linkedIds.map((linked: Json) => [linked.provider, linked.kind, linked.id]).sort()).toEqual(
      [
        // RevenueCat's customer is its original_app_user_id, here the user itself.
        ['revenuecat', 'customer', userId],
        ['stripe', 'customer', 'cus_test_1'],
        ['stripe', 'payment_intent', 'pi_support_paid'],
        ['stripe', 'payment_intent', 'pi_support_unknown_pack'],
      ].sort(),
    );
  });

  it('answers an empty view for a user Tally has never seen', async () => {
    const view: Json = await readJson(await stack.apiRequest('/admin/users/never-seen'));
    expect(view).toEqual({
      userId: 'never-seen',
      canonicalUserId: 'never-seen',
      wallet: { balance: 0, held: 0, available: 0, createdAt: null, lots: [], debt: 0, debts: [] },
      holds: { activeTotal: 0, items: [] },
      events: { items: [], total: 0, truncated: false },
      ledger: { entries: [], total: 0, truncated: false, sum: 0, matchesBalance: true },
      subscription: null,
      payments: [],
      refunds: [],
      disputes: [],
      topups: [],
      installments: [],
      studioRequests: { items: [], total: 0, truncated: false },
      linkedIds: [],
    });
  });

  it('limits the lists and says so', async () => {
    const view: Json = await readJson(await stack.apiRequest(`/admin/users/${userId}?eventLimit=1&ledgerLimit=1`));
    expect(view.events).toMatchObject({ total: 3, truncated: true });
    expect(view.events.items.map((event: Json) => event.attention)).toEqual(['parked']);
    expect(view.ledger).toMatchObject({ total: 2, truncated: true, sum: 200, matchesBalance: true });
    expect(view.ledger.entries).toHaveLength(1);
  });

  it('is admin only', async () => {
    expect((await stack.apiRequest(`/admin/users/${userId}`, { key: null })).status).toBe(401);
    expect((await stack.apiRequest(`/admin/users/${userId}`, { key: appKey })).status).toBe(401);
  });

  it('tally events show prints one event with its raw body, and exits 1 for an unknown id', async () => {
    if (!existsSync(cli)) throw new Error(`${cli} is missing: run the tests through \`pnpm test\`, which builds first`);
    const env = { PATH: process.env.PATH ?? '', DATABASE_URL: stack.database.url };
    const [row] = await stack.inboxRows('stripe', 'evt_support_unknown_pack');
    const run = (args: string[]) =>
      promisify(execFile)(process.execPath, [cli, 'events', 'show', ...args], { env, cwd: path.join(root, 'test') });

    const json = JSON.parse((await run([String(row?.id), '--json'])).stdout);
    expect(json).toMatchObject({ id: row?.id, provider_event_id: 'evt_support_unknown_pack', status: 'failed' });
    expect(JSON.parse(json.raw_body).data.object.metadata.pack_id).toBe('no_such_pack');

    const text = (await run([String(row?.id)])).stdout;
    expect(text).toMatch(/^PROVIDER_EVENT_ID\s+evt_support_unknown_pack$/m);
    expect(text).toContain('RAW BODY');
    expect(text).toContain('"pack_id": "no_such_pack"');

    await expect(run(['999999'])).rejects.toMatchObject({ code: 1, stderr: 'inbox event 999999 does not exist\n' });
  });

  it('tally user prints the same view as JSON, and as plain-text tables with headers', async () => {
    if (!existsSync(cli)) throw new Error(`${cli} is missing: run the tests through \`pnpm test\`, which builds first`);
    const run = (args: string[]) =>
      promisify(execFile)(process.execPath, [cli, 'user', userId, ...args], {
        env: { PATH: process.env.PATH ?? '', DATABASE_URL: stack.database.url },
        cwd: path.join(root, 'test'),
      });
    const api: Json = await readJson(await stack.apiRequest(`/admin/users/${userId}`));
    const json = await run(['--json']);
    expect(JSON.parse(json.stdout)).toEqual(api);

    const text = (await run([])).stdout;
    expect(text).toContain('wallet balance 200, held 0, available 200, debt 0; ledger sum 200 over 2 entries');
    const lines = text.split('\n');
    const eventsHeader = lines.findIndex((line) => line.startsWith('ID') && line.includes('ATTENTION'));
    expect(eventsHeader).toBeGreaterThan(0);
    expect(lines[eventsHeader + 1]).toMatch(/parked\s+stripe\s+evt_support_unknown_pack/);
    expect(text).toMatch(/REFERENCE\s+AMOUNT\s+BEFORE\s+AFTER/);
    expect(text).toContain('stripe:payment:pi_support_paid');
  });
});

describe('the support view of a user with a subscription from each source, payments, refunds and aliases', () => {
  const { stack, stripe, revenueCat } = suiteStackWithFakes({ revenueCatTimeoutMs: 5_000, worker: {} });
  const userId = 'full-support-user';
  const anonymous = '$RCAnonymousID:00000000feedbeef';
  const customer = 'cus_full_support';
  const subscriptionId = 'sub_full_support';
  const invoiceId = 'in_full_support';
  const paymentIntentId = 'pi_full_support';
  const chargeId = 'ch_full_support';
  const firstExpiry = daysFromNow(20);
  const renewedExpiry = daysFromNow(50);

  const finished = (provider: Provider, eventId: string) => stack.finishedInboxRow(provider, eventId);
  const postStripe = async (body: string) => {
    expect((await stack.postStripe(body, signStripe(body))).status).toBe(200);
    return finished('stripe', JSON.parse(body).id);
  };
  const postRevenueCat = async (body: string) => {
    expect((await stack.postRevenueCat(body)).status).toBe(200);
    return finished('revenuecat', JSON.parse(body).event.id);
  };

  beforeAll(async () => {
    // RevenueCat: the app bought the subscription while anonymous, then renewed it (two history rows).
    revenueCat.setSubscriber(userId, { 'premium.monthly': { expires_date: firstExpiry, store: 'app_store' } }, [
      anonymous,
    ]);
    const linked = { userId: anonymous, originalAppUserId: anonymous, aliases: [anonymous, userId] };
    expect(await postRevenueCat(revenueCatSubscriptionEvent({ id: 'rc-full-initial', ...linked }))).toMatchObject({
      outcome_code: 'subscription_synced',
    });
    revenueCat.setSubscriber(userId, { 'premium.monthly': { expires_date: renewedExpiry, store: 'app_store' } }, [
      anonymous,
    ]);
    expect(
      await postRevenueCat(revenueCatSubscriptionEvent({ id: 'rc-full-renewal', type: 'RENEWAL', ...linked })),
    ).toMatchObject({ outcome_code: 'subscription_synced' });

    // RevenueCat: a token pack bought, then refunded (token_refunds).
    const purchase = JSON.parse(revenueCatTokenPurchase({ id: 'rc-full-pack', userId }));
    purchase.event.transaction_id = 'tx-full-pack';
    expect(await postRevenueCat(JSON.stringify(purchase))).toMatchObject({ outcome_code: 'credited' });
    const refund = JSON.parse(JSON.stringify(purchase));
    Object.assign(refund.event, { id: 'rc-full-pack-refund', type: 'CANCELLATION', cancel_reason: 'CUSTOMER_SUPPORT' });
    expect(await postRevenueCat(JSON.stringify(refund))).toMatchObject({ outcome_code: 'refunded' });

    // Stripe: a pack paid (with its email), an annual subscription with its first invoice (eleven installments).
    expect(
      await postStripe(
        stripeEventBody(
          'payment_intent.succeeded',
          stripePackIntent({ id: paymentIntentId, userId, customer, email: 'full@example.com' }),
        ),
      ),
    ).toMatchObject({ outcome_code: 'credited' });
    stripe.putSubscription(
      stripeSubscription({ id: subscriptionId, customer, priceId: 'price_premium_annual', userId, periodEnd: 2e9 }),
    );
    await postStripe(
      stripeEventBody('customer.subscription.created', { id: subscriptionId, object: 'subscription', customer }),
    );
    expect(
      await postStripe(
        stripeEventBody('invoice.paid', stripeAnnualInvoice({ id: invoiceId, subscription: subscriptionId, customer })),
      ),
    ).toMatchObject({ outcome_code: 'credited' });

    // The user spends 170 of 200 tokens, then the pack is refunded: 30 back, 70 short.
    await stack.postPlainEntry({ userId, reference: 'test:full:spend', amount: -170, reason: 'spend' });
    expect(
      await postStripe(
        stripeEventBody('charge.refunded', stripeRefundedCharge({ id: chargeId, paymentIntent: paymentIntentId })),
      ),
    ).toMatchObject({ outcome_code: 'refunded' });

    // A pending top-up, a free studio request (no studio worker: it stays received), a parked event.
    expect(
      (await stack.apiRequest(`/v1/users/${userId}/topups`, { method: 'POST', body: { packId: 'tokens_100' } })).status,
    ).toBe(201);
    expect(
      (
        await stack.apiRequest(`/v1/users/${userId}/studio/requests`, {
          method: 'POST',
          body: { kind: 'image_edit', input: { prompt: 'a cat' } },
        })
      ).status,
    ).toBe(202);
    expect(
      await postStripe(
        stripeEventBody(
          'payment_intent.succeeded',
          stripePackIntent({ id: 'pi_full_support_bad', userId, customer, packId: 'no_such_pack' }),
          { eventId: 'evt_full_support_bad' },
        ),
      ),
    ).toMatchObject({ status: 'failed', outcome_code: 'invalid_event' });
    await stack.stopWorkers();
  });

  it('shows everything in one call when asked by an alias: errors first, both subscription sources with history, payments with the refund shortfall and email, refunds, top-ups, installments, studio requests, linked ids', async () => {
    const response = await stack.apiRequest(`/admin/users/${encodeURIComponent(anonymous)}`);
    expect(response.status).toBe(200);
    const view: Json = await readJson(response);

    expect(view.userId).toBe(anonymous);
    expect(view.canonicalUserId).toBe(userId);
    // The full refund took what was left (30 of 100): the other 70 are the wallet's debt (docs/debt.md).
    expect(view.wallet).toEqual({
      balance: 0,
      held: 0,
      available: 0,
      createdAt: expect.any(String),
      lots: [],
      debt: 70,
      debts: [
        expect.objectContaining({
          source: 'stripe_refund',
          takeBackReference: 'stripe:refund:ch_full_support',
          owed: 70,
          settled: 0,
          forgiven: 0,
          closedAt: null,
        }),
      ],
    });

    // Events under the alias (RevenueCat's app_user_id) and under the canonical id; the parked one first.
    expect(view.events.items[0]).toMatchObject({
      providerEventId: 'evt_full_support_bad',
      attention: 'parked',
      outcome: { code: 'invalid_event' },
    });
    // Stripe events that name only the customer, subscription, invoice or charge are the user's too.
    expect(view.events).toMatchObject({ total: 9, truncated: false });
    expect(view.events.items.map((event: Json) => [event.type, event.userId, event.attention])).toEqual([
      ['payment_intent.succeeded', userId, 'parked'],
      ['charge.refunded', null, 'none'],
      ['invoice.paid', null, 'none'],
      ['customer.subscription.created', null, 'none'],
      ['payment_intent.succeeded', userId, 'none'],
      ['CANCELLATION', userId, 'none'],
      ['NON_RENEWING_PURCHASE', userId, 'none'],
      ['RENEWAL', anonymous, 'none'],
      ['INITIAL_PURCHASE', anonymous, 'none'],
    ]);

    expect(view.ledger).toMatchObject({ total: 6, truncated: false, sum: 0, matchesBalance: true });
    expect(view.ledger.entries.map((entry: Json) => [entry.reference, entry.amount, entry.balanceAfter])).toEqual([
      [`stripe:refund:${chargeId}`, -30, 0],
      ['test:full:spend', -170, 30],
      [`stripe:invoice:${invoiceId}`, 100, 200],
      [`stripe:payment:${paymentIntentId}`, 100, 100],
      ['revenuecat:refund:tx-full-pack', -100, 0],
      ['revenuecat:event:rc-full-pack', 100, 100],
    ]);

    // Both sources; the combined answer is the one running latest (Stripe's period ends in 2033).
    expect(view.subscription.current).toEqual({
      source: 'stripe',
      planId: 'premium',
      status: 'active',
      expiresAt: new Date(2e9 * 1000).toISOString(),
      store: 'stripe',
      autoRenew: true,
    });
    expect(view.subscription.revenuecat).toMatchObject({
      status: 'active',
      planId: 'premium',
      productId: 'premium.monthly',
      expiresAt: renewedExpiry,
      store: 'app_store',
      autoRenew: true,
    });
    expect(view.subscription.stripe).toEqual([
      expect.objectContaining({
        subscriptionId,
        customerId: customer,
        planId: 'premium',
        priceId: 'price_premium_annual',
        interval: 'year',
        status: 'active',
        cancelAtPeriodEnd: false,
      }),
    ]);
    expect(view.subscription.historyTotal).toBe(2);
    expect(
      view.subscription.history.map((row: Json) => [row.change, row.toPlanId, row.toExpiresAt, row.cause]),
    ).toEqual([
      ['renewed', 'premium', renewedExpiry, 'inbox_event'],
      ['activated', 'premium', firstExpiry, 'inbox_event'],
    ]);

    // Payments newest first: the invoice, then the refunded pack with its shortfall and email.
    expect(view.payments).toEqual([
      expect.objectContaining({
        providerPaymentId: invoiceId,
        kind: 'subscription_invoice',
        status: 'succeeded',
        tokensGranted: 100,
        refundShortfall: 0,
      }),
      expect.objectContaining({
        providerPaymentId: paymentIntentId,
        kind: 'token_pack',
        productId: 'tokens_100',
        amountMinor: 499,
        currency: 'usd',
        status: 'refunded',
        ledgerReference: `stripe:payment:${paymentIntentId}`,
        tokensGranted: 100,
        amountRefundedMinor: 499,
        tokensRefunded: 30,
        refundShortfall: 70,
        refundedAt: expect.any(String),
        email: { status: 'pending', toAddress: 'full@example.com', attempts: 0, lastError: null, sentAt: null },
      }),
    ]);
    expect(view.refunds).toEqual([
      expect.objectContaining({
        provider: 'revenuecat',
        providerRefundId: 'tx-full-pack',
        creditReference: 'revenuecat:event:rc-full-pack',
        tokensCredited: 100,
        tokensTaken: 100,
        shortfall: 0,
      }),
    ]);
    expect(view.topups).toEqual([
      expect.objectContaining({
        packId: 'tokens_100',
        tokens: 100,
        status: 'pending',
        paymentIntentId: expect.any(String),
      }),
    ]);
    expect(view.installments.map((row: Json) => [row.sequence, row.tokens, row.status, row.ledgerReference])).toEqual(
      Array.from({ length: 11 }, (_, i) => [i + 1, 100, 'scheduled', `stripe:installment:${view.installments[i].id}`]),
    );
    expect(view.studioRequests).toEqual({
      items: [
        expect.objectContaining({
          kind: 'image_edit',
          status: 'received',
          tokensCharged: 0,
          freeTier: true,
          error: null,
        }),
      ],
      total: 1,
      truncated: false,
    });

    // Linked ids: the alias (user_aliases), the Stripe customer (once, though both tables and events name it).
    const linked = view.linkedIds.map((entry: Json) => [entry.provider, entry.kind, entry.id]);
    expect(linked).toEqual(
      expect.arrayContaining([
        ['tally', 'alias', anonymous],
        ['stripe', 'customer', customer],
      ]),
    );
    expect(linked.filter((entry: string[]) => entry[2] === customer)).toHaveLength(1);
    expect(linked).toEqual(
      expect.arrayContaining([
        ['stripe', 'subscription', subscriptionId],
        ['stripe', 'invoice', invoiceId],
        ['stripe', 'payment_intent', paymentIntentId],
      ]),
    );

    // The canonical id answers the same view.
    const byCanonical: Json = await readJson(await stack.apiRequest(`/admin/users/${userId}`));
    expect({ ...byCanonical, userId: anonymous }).toEqual(view);
  });

  it('limits studio requests and history and says so', async () => {
    const view: Json = await readJson(await stack.apiRequest(`/admin/users/${userId}?studioLimit=1&historyLimit=1`));
    expect(view.studioRequests).toMatchObject({ total: 1, truncated: false });
    expect(view.subscription.history.map((row: Json) => row.change)).toEqual(['renewed']);
    expect(view.subscription.historyTotal).toBe(2);
  });

  it('tally user prints every section as plain-text tables', async () => {
    if (!existsSync(cli)) throw new Error(`${cli} is missing: run the tests through \`pnpm test\`, which builds first`);
    const { stdout } = await promisify(execFile)(process.execPath, [cli, 'user', anonymous], {
      env: { PATH: process.env.PATH ?? '', DATABASE_URL: stack.database.url },
      cwd: path.join(root, 'test'),
    });
    expect(stdout).toContain(`user ${anonymous} (linked to canonical user ${userId})`);
    expect(stdout).toMatch(/subscription: active premium from stripe \(store stripe/);
    expect(stdout).toMatch(/^SOURCE\s+ID\s+STATUS\s+PLAN/m);
    expect(stdout).toMatch(/^revenuecat\s+premium\.monthly\s+active\s+premium/m);
    expect(stdout).toMatch(new RegExp(`^stripe\\s+${subscriptionId}\\s+active\\s+premium`, 'm'));
    expect(stdout).toContain('subscription history (2 of 2, newest first)');
    expect(stdout).toMatch(/\brenewed\s+active -> active\s+premium -> premium/);
    expect(stdout).toMatch(
      new RegExp(
        `${paymentIntentId}\\s+token_pack\\s+tokens_100\\s+499 usd\\s+refunded\\s+100\\s+499\\s+30\\s+70\\s+pending`,
      ),
    );
    expect(stdout).toMatch(/revenuecat\s+tx-full-pack\s+tokens_100\s+100\s+100\s+0/);
    expect(stdout).toMatch(/^tu_\w+\s+tokens_100\s+100\s+499 usd\s+pending/m);
    expect(stdout).toContain('installments (11, by due date)');
    expect(stdout).toContain('studio requests (1 of 1, newest first)');
    expect(stdout).toMatch(/^tally\s+alias\s+\$RCAnonymousID:00000000feedbeef/m);
  });
});
