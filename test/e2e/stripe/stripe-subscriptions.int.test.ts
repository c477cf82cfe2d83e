import {
  createInboxHandlers,
  grantDueInstallments,
  type InboxHandler,
  recordInboxEvent,
  STRIPE_API_VERSION,
  saveStripeSubscription,
  toStripeInboxDraftFromBody,
} from '@tally/billing-core';
import { sql } from 'kysely';
import { processOne } from '../../support/engine';
import { eventually, readJson } from '../../support/stack';
import {
  stripeAnnualInvoice,
  stripeEventBody,
  stripeId,
  stripeInvoice,
  stripeRefundedCharge,
  stripeSubscription,
  stripeSubscriptionCheckout,
} from '../../support/stripe-events';
import { subscribeAnnualAndPayFirstInvoice } from '../../support/stripe-flows';
import { stripeStateOf } from '../../support/stripe-state';
import { quickRetryLater, suiteStackWithFakeStripe } from '../../support/suite';

describe('Stripe subscriptions', () => {
  const { stack, fake } = suiteStackWithFakeStripe({ worker: { retryLater: quickRetryLater } });

  const post = (body: string) => stack.deliverStripe(body);
  const finished = (eventId: string) => stack.finishedInboxRow('stripe', eventId);
  const subscribeAnnual = (userId: string) => subscribeAnnualAndPayFirstInvoice(stack, fake, userId);

  it('grants a monthly subscription once when its checkout and first invoice both arrive, each twice', async () => {
    const userId = stripeId('user');
    const customer = stripeId('cus');
    const subscriptionId = stripeId('sub');
    const invoiceId = stripeId('in');
    fake.putSubscription(
      stripeSubscription({ id: subscriptionId, customer, priceId: 'price_premium_monthly', userId }),
    );
    const checkout = stripeEventBody(
      'checkout.session.completed',
      stripeSubscriptionCheckout({ id: stripeId('cs'), userId, customer, subscription: subscriptionId }),
    );
    const invoice = stripeEventBody(
      'invoice.paid',
      stripeInvoice({
        id: invoiceId,
        subscription: subscriptionId,
        customer,
        priceId: 'price_premium_monthly',
        amountPaid: 999,
        email: 'a@example.com',
      }),
    );
    const ids = [await post(checkout), await post(invoice), await post(checkout), await post(invoice)];
    const rows = await Promise.all(ids.map(finished));
    expect(rows.map((row) => [row.type, row.status, row.outcome_code])).toEqual([
      ['checkout.session.completed', 'processed', 'subscription_synced'],
      ['invoice.paid', 'processed', expect.stringMatching(/^(credited|already_credited)$/)],
      ['checkout.session.completed', 'processed', 'subscription_synced'],
      ['invoice.paid', 'processed', expect.stringMatching(/^(credited|already_credited)$/)],
    ]);

    expect(await stripeStateOf(stack.db, userId)).toEqual({
      balance: 100,
      ledger: [
        {
          reference: `stripe:invoice:${invoiceId}`,
          amount: 100,
          balance_before: 0,
          balance_after: 100,
          reason: 'subscription_period',
        },
      ],
      payments: [
        {
          provider_payment_id: invoiceId,
          kind: 'subscription_invoice',
          product_id: 'premium',
          amount_minor: 999,
          currency: 'usd',
          status: 'succeeded',
          ledger_reference: `stripe:invoice:${invoiceId}`,
          tokens_granted: 100,
          tokens_refunded: 0,
          refund_shortfall: 0,
        },
      ],
      subscriptions: [
        {
          subscription_id: subscriptionId,
          customer_id: customer,
          plan_id: 'premium',
          price_id: 'price_premium_monthly',
          billing_interval: 'month',
          status: 'active',
          cancel_at_period_end: false,
        },
      ],
      emails: [{ provider_payment_id: invoiceId, to_address: 'a@example.com', status: 'pending' }],
      customers: [customer],
      installments: [],
    });
    // The subscription was re-read from the API with the pinned version.
    expect(fake.requests.filter((request) => request.path === `/v1/subscriptions/${subscriptionId}`)).not.toHaveLength(
      0,
    );
    expect(fake.requests.every((request) => request.apiVersion === STRIPE_API_VERSION)).toBe(true);
  });

  it('makes an invoice.paid that arrives before its subscription and customer wait, then converge', async () => {
    const userId = stripeId('user');
    const customer = stripeId('cus');
    const subscriptionId = stripeId('sub');
    const invoiceId = stripeId('in');
    const invoiceEvent = await post(
      stripeEventBody(
        'invoice.paid',
        stripeInvoice({
          id: invoiceId,
          subscription: subscriptionId,
          customer,
          priceId: 'price_premium_monthly',
          amountPaid: 999,
        }),
      ),
    );
    const waiting = await eventually('the invoice to wait', async () => {
      const [row] = await stack.inboxRows('stripe', invoiceEvent);
      return row?.outcome_code === 'waiting' ? row : undefined;
    });
    expect(waiting).toMatchObject({ status: 'received', attempts: 0, last_error: null });
    expect(waiting.outcome_detail).toContain(`subscription ${subscriptionId}`);
    expect((await stripeStateOf(stack.db, userId)).balance).toBe(0);

    // The subscription (without user metadata) exists in Stripe; its checkout names the user.
    fake.putSubscription(
      stripeSubscription({ id: subscriptionId, customer, priceId: 'price_premium_monthly', userId: null }),
    );
    const created = await post(
      stripeEventBody('customer.subscription.created', { id: subscriptionId, object: 'subscription', customer }),
    );
    // Neither metadata nor a known customer names the user yet: the subscription event waits too.
    await eventually('the subscription event to wait', async () => {
      const [row] = await stack.inboxRows('stripe', created);
      return row?.outcome_code === 'waiting';
    });
    await post(
      stripeEventBody(
        'checkout.session.completed',
        stripeSubscriptionCheckout({ id: stripeId('cs'), userId, customer, subscription: subscriptionId }),
      ),
    );
    const done = await finished(invoiceEvent);
    expect(done).toMatchObject({ status: 'processed', outcome_code: 'credited' });
    expect(done.deferrals).toBeGreaterThan(0);
    await finished(created);
    const state = await stripeStateOf(stack.db, userId);
    expect(state).toMatchObject({
      balance: 100,
      ledger: [{ reference: `stripe:invoice:${invoiceId}`, amount: 100, balance_before: 0, balance_after: 100 }],
      payments: [{ provider_payment_id: invoiceId, kind: 'subscription_invoice', tokens_granted: 100 }],
      subscriptions: [{ subscription_id: subscriptionId, status: 'active', plan_id: 'premium' }],
      customers: [customer],
    });
  });

  it('converges on the API state when updated arrives before created and a stale updated after deleted', async () => {
    const userId = stripeId('user');
    const customer = stripeId('cus');
    const subscriptionId = stripeId('sub');
    const notice = (type: string) =>
      stripeEventBody(type, { id: subscriptionId, object: 'subscription', customer, status: 'active' });
    fake.putSubscription(
      stripeSubscription({
        id: subscriptionId,
        customer,
        priceId: 'price_premium_monthly',
        userId,
        cancelAtPeriodEnd: true,
      }),
    );
    const updated = await post(notice('customer.subscription.updated'));
    expect(await finished(updated)).toMatchObject({ status: 'processed', outcome_code: 'subscription_synced' });
    const created = await post(notice('customer.subscription.created'));
    expect(await finished(created)).toMatchObject({ status: 'processed' });
    expect((await stripeStateOf(stack.db, userId)).subscriptions).toEqual([
      expect.objectContaining({ subscription_id: subscriptionId, status: 'active', cancel_at_period_end: true }),
    ]);

    // Stripe cancels it; the deleted event and then a late `updated` (payload still says active).
    fake.putSubscription(
      stripeSubscription({
        id: subscriptionId,
        customer,
        priceId: 'price_premium_monthly',
        userId,
        status: 'canceled',
      }),
    );
    await finished(await post(notice('customer.subscription.deleted')));
    await finished(await post(notice('customer.subscription.updated')));
    expect(await stripeStateOf(stack.db, userId)).toEqual({
      balance: 0,
      ledger: [],
      payments: [],
      subscriptions: [
        {
          subscription_id: subscriptionId,
          customer_id: customer,
          plan_id: 'premium',
          price_id: 'price_premium_monthly',
          billing_interval: 'month',
          status: 'canceled',
          cancel_at_period_end: false,
        },
      ],
      emails: [],
      customers: [customer],
      installments: [],
    });
  });

  it('waits when the Stripe API answers 429 and applies the subscription once it answers', async () => {
    const userId = stripeId('user');
    const customer = stripeId('cus');
    const subscriptionId = stripeId('sub');
    fake.putSubscription(
      stripeSubscription({ id: subscriptionId, customer, priceId: 'price_premium_monthly', userId }),
    );
    fake.failNext(429, { headers: { 'retry-after': '0' }, pathIncludes: subscriptionId });
    fake.failNext(500, { pathIncludes: subscriptionId });
    const id = await post(
      stripeEventBody('customer.subscription.created', { id: subscriptionId, object: 'subscription', customer }),
    );
    const row = await finished(id);
    expect(row).toMatchObject({ status: 'processed', outcome_code: 'subscription_synced' });
    expect(row.deferrals).toBe(1);
    expect((await stripeStateOf(stack.db, userId)).subscriptions).toEqual([
      expect.objectContaining({ subscription_id: subscriptionId, status: 'active' }),
    ]);
  });

  it('grants an annual plan a twelfth now, each installment once even with two loops at once, and voids the rest after deletion', async () => {
    const userId = stripeId('user');
    const customer = stripeId('cus');
    const subscriptionId = stripeId('sub');
    const invoiceId = stripeId('in');
    fake.putSubscription(stripeSubscription({ id: subscriptionId, customer, priceId: 'price_premium_annual', userId }));
    await finished(
      await post(
        stripeEventBody('customer.subscription.created', { id: subscriptionId, object: 'subscription', customer }),
      ),
    );
    // The same invoice delivered under two event ids.
    const paid = () =>
      stripeEventBody('invoice.paid', stripeAnnualInvoice({ id: invoiceId, subscription: subscriptionId, customer }));
    expect(await finished(await post(paid()))).toMatchObject({ status: 'processed', outcome_code: 'credited' });
    expect(await finished(await post(paid()))).toMatchObject({ status: 'processed', outcome_code: 'already_credited' });

    let state = await stripeStateOf(stack.db, userId);
    expect(state.balance).toBe(100);
    expect(state.ledger).toEqual([
      expect.objectContaining({
        reference: `stripe:invoice:${invoiceId}`,
        amount: 100,
        reason: 'subscription_annual_first_installment',
      }),
    ]);
    expect(state.installments.map((row) => [row.sequence, row.tokens, row.status, row.attempts])).toEqual(
      Array.from({ length: 11 }, (_, i) => [i + 1, 100, 'scheduled', 0]),
    );
    // Nothing is due yet: a loop pass grants nothing.
    const options = { batchSize: 50, processingStaleAfterMs: 60_000, maxAttempts: 5 };
    await grantDueInstallments(stack.outboxDeps(), options);
    expect((await stripeStateOf(stack.db, userId)).balance).toBe(100);

    // Time passes (database clock): installments 1 and 2 are due. Two loops race on them.
    await sql`UPDATE stripe_installments SET due_at = now() - interval '1 minute'
              WHERE invoice_id = ${invoiceId} AND sequence IN (1, 2)`.execute(stack.db);
    const passes = await Promise.all([
      grantDueInstallments(stack.outboxDeps(), options),
      grantDueInstallments(stack.outboxDeps(), options),
    ]);
    expect(passes.reduce((sum, pass) => sum + pass.granted, 0)).toBe(2);
    // A third installment becomes due, then Stripe deletes the subscription.
    await sql`UPDATE stripe_installments SET due_at = now() - interval '1 minute'
              WHERE invoice_id = ${invoiceId} AND sequence = 3`.execute(stack.db);
    fake.putSubscription(
      stripeSubscription({ id: subscriptionId, customer, priceId: 'price_premium_annual', userId, status: 'canceled' }),
    );
    expect(
      await finished(
        await post(
          stripeEventBody('customer.subscription.deleted', { id: subscriptionId, object: 'subscription', customer }),
        ),
      ),
    ).toMatchObject({ status: 'processed', outcome_detail: expect.stringContaining('8 installments voided') });
    await grantDueInstallments(stack.outboxDeps(), options);
    await grantDueInstallments(stack.outboxDeps(), options);

    state = await stripeStateOf(stack.db, userId);
    const [first, second, third] = state.installments;
    expect(state.balance).toBe(400);
    // Installments 1 and 2 were granted by two racing loops: their ledger rows may come in either order.
    const racing = state.ledger.slice(1, 3).map((entry) => entry.reference);
    const inLedgerOrder = [first, second].sort(
      (a, b) => racing.indexOf(`stripe:installment:${a?.id}`) - racing.indexOf(`stripe:installment:${b?.id}`),
    );
    expect(state.ledger).toEqual([
      {
        reference: `stripe:invoice:${invoiceId}`,
        amount: 100,
        balance_before: 0,
        balance_after: 100,
        reason: 'subscription_annual_first_installment',
      },
      ...[...inLedgerOrder, third].map((row, i) => ({
        reference: `stripe:installment:${row?.id}`,
        amount: 100,
        balance_before: 100 * (i + 1),
        balance_after: 100 * (i + 2),
        reason: 'subscription_installment',
      })),
    ]);
    expect(state.installments.map((row) => [row.sequence, row.status, row.attempts])).toEqual([
      [1, 'granted', 1],
      [2, 'granted', 1],
      [3, 'granted', 1],
      ...Array.from({ length: 8 }, (_, i) => [i + 4, 'void', 0]),
    ]);
    expect(state.subscriptions).toEqual([expect.objectContaining({ status: 'canceled', billing_interval: 'year' })]);
    expect(state.payments).toEqual([expect.objectContaining({ provider_payment_id: invoiceId, tokens_granted: 100 })]);
  });

  it('retries an installment left in processing by a loop that died part-way, granting it once', async () => {
    const userId = stripeId('user');
    const { invoiceId } = await subscribeAnnual(userId);
    // A loop claimed installment 1 (scheduled → processing, attempts 1) and died before granting.
    await sql`UPDATE stripe_installments SET status = 'processing', attempts = 1,
                due_at = now() - interval '2 hours', updated_at = now() - interval '1 hour'
              WHERE invoice_id = ${invoiceId} AND sequence = 1`.execute(stack.db);
    const options = { batchSize: 50, processingStaleAfterMs: 60_000, maxAttempts: 5 };
    expect(await grantDueInstallments(stack.outboxDeps(), options)).toEqual({
      claimed: 1,
      granted: 1,
      alreadyGranted: 0,
      failed: 0,
    });
    expect(await grantDueInstallments(stack.outboxDeps(), options)).toEqual({
      claimed: 0,
      granted: 0,
      alreadyGranted: 0,
      failed: 0,
    });
    const state = await stripeStateOf(stack.db, userId);
    expect(state.balance).toBe(200);
    expect(state.ledger.map((row) => row.reference)).toEqual([
      `stripe:invoice:${invoiceId}`,
      `stripe:installment:${state.installments[0]?.id}`,
    ]);
    expect(state.installments[0]).toMatchObject({ status: 'granted', attempts: 2 });
    expect(state.installments.slice(1).every((row) => row.status === 'scheduled')).toBe(true);
  });

  it('keeps the error of an installment whose grant fails, claims it again only after the stale window, and parks it as failed at maxAttempts', async () => {
    const userId = stripeId('user');
    const { invoiceId } = await subscribeAnnual(userId);
    await sql`UPDATE stripe_installments SET due_at = now() - interval '1 minute'
              WHERE invoice_id = ${invoiceId} AND sequence = 1`.execute(stack.db);
    const due = await stack.db
      .selectFrom('stripe_installments')
      .select('id')
      .where('invoice_id', '=', invoiceId)
      .where('sequence', '=', 1)
      .executeTakeFirstOrThrow();
    // The database refuses this installment's ledger row (a failure a later attempt may not
    // meet): every grant of it throws until the trigger is dropped.
    const reference = `stripe:installment:${due.id}`;
    const trigger = `test_refuse_${due.id}`;
    await sql
      .raw(`CREATE FUNCTION ${trigger}() RETURNS trigger LANGUAGE plpgsql AS $$
              BEGIN IF NEW.reference = '${reference}' THEN RAISE EXCEPTION 'test: ledger refuses ${reference}'; END IF;
              RETURN NEW; END $$;
            CREATE TRIGGER ${trigger} BEFORE INSERT ON ledger_entries FOR EACH ROW EXECUTE FUNCTION ${trigger}()`)
      .execute(stack.db);
    const installment = () =>
      stack.db
        .selectFrom('stripe_installments')
        .select(['status', 'attempts', 'last_error'])
        .where('id', '=', due.id)
        .executeTakeFirstOrThrow();
    const conflict = `test: ledger refuses ${reference}`;
    const pass = (processingStaleAfterMs: number) =>
      grantDueInstallments(stack.outboxDeps(), { batchSize: 50, processingStaleAfterMs, maxAttempts: 3 });
    const oneFailure = { claimed: 1, granted: 0, alreadyGranted: 0, failed: 1 };
    const nothing = { claimed: 0, granted: 0, alreadyGranted: 0, failed: 0 };

    expect(await pass(60_000)).toEqual(oneFailure);
    expect(await installment()).toEqual({
      status: 'processing',
      attempts: 1,
      last_error: expect.stringContaining(conflict),
    });
    // Within the stale window (60 s since the claim) no loop takes the row again.
    expect(await pass(60_000)).toEqual(nothing);
    expect(await installment()).toMatchObject({ status: 'processing', attempts: 1 });
    // Past it (a window of 0: the claim is older than now), each pass claims it again and fails.
    expect(await pass(0)).toEqual(oneFailure);
    expect(await installment()).toMatchObject({ status: 'processing', attempts: 2 });
    expect(await pass(0)).toEqual(oneFailure);
    expect(await installment()).toMatchObject({ status: 'processing', attempts: 3 });
    // maxAttempts (3) attempts started: the next claim parks it, keeping its error, and grants nothing.
    expect(await pass(0)).toEqual(nothing);
    expect(await installment()).toEqual({
      status: 'failed',
      attempts: 3,
      last_error: expect.stringContaining(conflict),
    });
    expect(await pass(0)).toEqual(nothing);

    const state = await stripeStateOf(stack.db, userId);
    expect(state.balance).toBe(100);
    expect(state.ledger).toEqual([
      {
        reference: `stripe:invoice:${invoiceId}`,
        amount: 100,
        balance_before: 0,
        balance_after: 100,
        reason: 'subscription_annual_first_installment',
      },
    ]);
    expect(state.installments.map((row) => [row.sequence, row.status, row.attempts])).toEqual([
      [1, 'failed', 3],
      ...Array.from({ length: 10 }, (_, i) => [i + 2, 'scheduled', 0]),
    ]);
    await sql.raw(`DROP TRIGGER ${trigger} ON ledger_entries; DROP FUNCTION ${trigger}()`).execute(stack.db);
  });

  it('parks an installment whose grant meets a ledger reference conflict at once, with the conflict as its error, instead of retrying it to its cap', async () => {
    const userId = stripeId('user');
    const otherUser = stripeId('user');
    const { invoiceId } = await subscribeAnnual(userId);
    await sql`UPDATE stripe_installments SET due_at = now() - interval '1 minute'
              WHERE invoice_id = ${invoiceId} AND sequence = 1`.execute(stack.db);
    const due = await stack.db
      .selectFrom('stripe_installments')
      .select('id')
      .where('invoice_id', '=', invoiceId)
      .where('sequence', '=', 1)
      .executeTakeFirstOrThrow();
    // The installment's reference already credits someone else: no retry can ever grant it.
    const reference = `stripe:installment:${due.id}`;
    await stack.postPlainEntry({
      userId: otherUser,
      reference: reference,
      amount: 100,
      reason: 'test_conflicting_grant',
    });
    const pass = () =>
      grantDueInstallments(stack.outboxDeps(), { batchSize: 50, processingStaleAfterMs: 0, maxAttempts: 10 });
    expect(await pass()).toEqual({ claimed: 1, granted: 0, alreadyGranted: 0, failed: 1 });
    expect(await pass()).toEqual({ claimed: 0, granted: 0, alreadyGranted: 0, failed: 0 });
    expect(
      await stack.db
        .selectFrom('stripe_installments')
        .select(['status', 'attempts', 'last_error'])
        .where('id', '=', due.id)
        .executeTakeFirstOrThrow(),
    ).toEqual({
      status: 'failed',
      attempts: 1,
      last_error: expect.stringContaining(
        `ledger reference ${reference} already posts 100 to ${otherUser}; refusing 100 to ${userId}`,
      ),
    });
    expect((await stripeStateOf(stack.db, userId)).balance).toBe(100);
    // The conflicting entry is untouched: the failure moved no money.
    expect((await stripeStateOf(stack.db, otherUser)).ledger).toEqual([
      { reference, amount: 100, balance_before: 0, balance_after: 100, reason: 'test_conflicting_grant' },
    ]);
  });

  it('grants each renewal invoice once and nothing after a deletion that follows a renewal', async () => {
    const userId = stripeId('user');
    const customer = stripeId('cus');
    const subscriptionId = stripeId('sub');
    const [firstInvoice, renewalInvoice] = [stripeId('in'), stripeId('in')];
    fake.putSubscription(
      stripeSubscription({ id: subscriptionId, customer, priceId: 'price_premium_monthly', userId }),
    );
    const created = stripeEventBody('customer.subscription.created', {
      id: subscriptionId,
      object: 'subscription',
      customer,
    });
    await finished(await post(created));
    const invoice = (id: string, billingReason: string) =>
      stripeEventBody(
        'invoice.paid',
        stripeInvoice({
          id,
          subscription: subscriptionId,
          customer,
          priceId: 'price_premium_monthly',
          amountPaid: 999,
          billingReason,
        }),
      );
    expect(await finished(await post(invoice(firstInvoice, 'subscription_create')))).toMatchObject({
      outcome_code: 'credited',
    });
    expect(await finished(await post(invoice(renewalInvoice, 'subscription_cycle')))).toMatchObject({
      outcome_code: 'credited',
    });
    fake.putSubscription(
      stripeSubscription({
        id: subscriptionId,
        customer,
        priceId: 'price_premium_monthly',
        userId,
        status: 'canceled',
      }),
    );
    await finished(
      await post(
        stripeEventBody('customer.subscription.deleted', { id: subscriptionId, object: 'subscription', customer }),
      ),
    );
    // A late redelivery of the renewal (new event id) after the deletion grants nothing more.
    expect(await finished(await post(invoice(renewalInvoice, 'subscription_cycle')))).toMatchObject({
      outcome_code: 'already_credited',
    });
    const state = await stripeStateOf(stack.db, userId);
    expect(state).toEqual({
      balance: 200,
      ledger: [
        {
          reference: `stripe:invoice:${firstInvoice}`,
          amount: 100,
          balance_before: 0,
          balance_after: 100,
          reason: 'subscription_period',
        },
        {
          reference: `stripe:invoice:${renewalInvoice}`,
          amount: 100,
          balance_before: 100,
          balance_after: 200,
          reason: 'subscription_period',
        },
      ],
      payments: [
        expect.objectContaining({
          provider_payment_id: firstInvoice,
          kind: 'subscription_invoice',
          tokens_granted: 100,
        }),
        expect.objectContaining({
          provider_payment_id: renewalInvoice,
          kind: 'subscription_invoice',
          tokens_granted: 100,
        }),
      ],
      subscriptions: [
        expect.objectContaining({ subscription_id: subscriptionId, status: 'canceled', plan_id: 'premium' }),
      ],
      emails: [
        { provider_payment_id: firstInvoice, to_address: null, status: 'pending' },
        { provider_payment_id: renewalInvoice, to_address: null, status: 'pending' },
      ],
      customers: [customer],
      installments: [],
    });
  });

  it('grants an annual plan its first twelfth, then a due monthly installment through the installments worker role', async () => {
    const userId = stripeId('user');
    const { invoiceId } = await subscribeAnnual(userId);
    expect((await stripeStateOf(stack.db, userId)).balance).toBe(100);
    await sql`UPDATE stripe_installments SET due_at = now() - interval '1 second'
              WHERE invoice_id = ${invoiceId} AND sequence = 1`.execute(stack.db);
    const loops = [1, 2].map(() =>
      stack.startWorker({
        roles: ['installments'],
        installments: { intervalMs: 50, batchSize: 10, processingStaleAfterMs: 60_000, maxAttempts: 5 },
      }),
    );
    await eventually('the first installment to be granted', async () => {
      const state = await stripeStateOf(stack.db, userId);
      return state.installments[0]?.status === 'granted';
    });
    await Promise.all(loops.map((loop) => loop.loops.installments?.runOnce()));
    const state = await stripeStateOf(stack.db, userId);
    expect(state.balance).toBe(200);
    expect(state.ledger.map((row) => [row.reference, row.amount, row.balance_after])).toEqual([
      [`stripe:invoice:${invoiceId}`, 100, 100],
      [`stripe:installment:${state.installments[0]?.id}`, 100, 200],
    ]);
    expect(state.installments.map((row) => row.status)).toEqual(['granted', ...Array(10).fill('scheduled')]);
  });

  it('answers GET /v1/users/{userId}/subscription for a Stripe subscription, and combines it with RevenueCat by the latest expiry', async () => {
    const userId = stripeId('user');
    const customer = stripeId('cus');
    const subscriptionId = stripeId('sub');
    const periodEnd = Math.floor(Date.now() / 1000) + 30 * 24 * 3600;
    const subscription = (options: { status?: string; cancelAtPeriodEnd?: boolean } = {}) =>
      stripeSubscription({
        id: subscriptionId,
        customer,
        priceId: 'price_premium_monthly',
        userId,
        periodEnd,
        ...options,
      });
    const notice = (type: string) => stripeEventBody(type, { id: subscriptionId, object: 'subscription', customer });
    const answer = async () => {
      const response = await stack.apiRequest(`/v1/users/${userId}/subscription`);
      return { status: response.status, body: await readJson(response) };
    };

    expect((await answer()).status).toBe(404);
    fake.putSubscription(subscription());
    expect(await finished(await post(notice('customer.subscription.created')))).toMatchObject({
      outcome_code: 'subscription_synced',
    });
    const stripeAnswer = {
      userId,
      planId: 'premium',
      status: 'active',
      expiresAt: new Date(periodEnd * 1000).toISOString(),
      store: 'stripe',
      autoRenew: true,
    };
    expect(await answer()).toEqual({ status: 200, body: stripeAnswer });

    // Set to cancel at the period end: still active, no longer renewing.
    fake.putSubscription(subscription({ cancelAtPeriodEnd: true }));
    await finished(await post(notice('customer.subscription.updated')));
    expect((await answer()).body).toEqual({ ...stripeAnswer, autoRenew: false });

    // A RevenueCat subscription of the same user running later wins; one ending sooner does not.
    const later = new Date((periodEnd + 10 * 24 * 3600) * 1000);
    await stack.db
      .insertInto('subscriptions')
      .values({
        user_id: userId,
        source: 'revenuecat',
        status: 'active',
        plan_id: 'premium',
        product_id: 'premium.annual',
        expires_at: later,
        store: 'app_store',
        auto_renew: true,
      })
      .execute();
    expect((await answer()).body).toEqual({
      userId,
      planId: 'premium',
      status: 'active',
      expiresAt: later.toISOString(),
      store: 'app_store',
      autoRenew: true,
    });
    const sooner = new Date((periodEnd - 10 * 24 * 3600) * 1000);
    await stack.db.updateTable('subscriptions').set({ expires_at: sooner }).where('user_id', '=', userId).execute();
    expect((await answer()).body).toEqual({ ...stripeAnswer, autoRenew: false });

    // Stripe ends it: the active RevenueCat subscription answers; without it, the Stripe one, inactive.
    fake.putSubscription(subscription({ status: 'canceled' }));
    await finished(await post(notice('customer.subscription.deleted')));
    expect((await answer()).body).toMatchObject({
      store: 'app_store',
      status: 'active',
      expiresAt: sooner.toISOString(),
    });
    await stack.db
      .updateTable('subscriptions')
      .set({ status: 'inactive', plan_id: null, updated_at: new Date(Date.now() - 3_600_000) })
      .where('user_id', '=', userId)
      .execute();
    expect((await answer()).body).toEqual({
      userId,
      planId: null,
      status: 'inactive',
      expiresAt: new Date(periodEnd * 1000).toISOString(),
      store: 'stripe',
      autoRenew: false,
    });
  });

  it("takes back a refunded monthly invoice's credits in proportion to the money, from a charge in the current shape (no invoice field) or the legacy one", async () => {
    const userId = stripeId('user');
    const customer = stripeId('cus');
    const subscriptionId = stripeId('sub');
    const [firstInvoice, renewalInvoice] = [stripeId('in'), stripeId('in')];
    const [firstIntent, renewalIntent] = [stripeId('pi'), stripeId('pi')];
    fake.putSubscription(
      stripeSubscription({ id: subscriptionId, customer, priceId: 'price_premium_monthly', userId }),
    );
    await finished(
      await post(
        stripeEventBody('customer.subscription.created', { id: subscriptionId, object: 'subscription', customer }),
      ),
    );
    for (const id of [firstInvoice, renewalInvoice]) {
      expect(
        await finished(
          await post(
            stripeEventBody(
              'invoice.paid',
              stripeInvoice({
                id,
                subscription: subscriptionId,
                customer,
                priceId: 'price_premium_monthly',
                amountPaid: 999,
              }),
            ),
          ),
        ),
      ).toMatchObject({ outcome_code: 'credited' });
    }

    // Current shape: the charge names only its intent; Stripe links the intent to the invoice
    // through an InvoicePayment. The first lookup fails (500) and is retried.
    fake.putInvoicePayment({ invoice: firstInvoice, paymentIntent: firstIntent, amountPaid: 999 });
    fake.failNext(500, { pathIncludes: '/v1/invoice_payments' });
    const currentCharge = stripeId('ch');
    const current = stripeRefundedCharge({ id: currentCharge, paymentIntent: firstIntent, amount: 999 });
    expect(current).not.toHaveProperty('invoice');
    const currentRefund = await finished(await post(stripeEventBody('charge.refunded', current)));
    expect(currentRefund).toMatchObject({
      status: 'processed',
      outcome_code: 'refunded',
      attempts: 2,
      deferrals: 0,
    });
    expect(currentRefund.outcome_detail).toContain(`took back 100 of 100 tokens owed`);
    const lookups = fake.requests.filter((request) => request.path === '/v1/invoice_payments');
    expect(lookups.map((request) => [request.form['payment[type]'], request.form['payment[payment_intent]']])).toEqual([
      ['payment_intent', firstIntent],
      ['payment_intent', firstIntent],
    ]);

    // Legacy shape (before 2025-03-31): the charge names its invoice; no lookup is needed.
    const legacyCharge = stripeId('ch');
    const legacy = {
      ...stripeRefundedCharge({ id: legacyCharge, paymentIntent: renewalIntent, amount: 999, amountRefunded: 500 }),
      invoice: renewalInvoice,
    };
    const legacyRefund = await finished(await post(stripeEventBody('charge.refunded', legacy)));
    expect(legacyRefund).toMatchObject({
      status: 'processed',
      outcome_code: 'partially_refunded',
      attempts: 1,
      deferrals: 0,
    });
    // floor(100 × 500 / 999) = 50 of the invoice's 100 credits.
    expect(legacyRefund.outcome_detail).toContain(`took back 50 of 50 tokens owed`);
    expect(fake.requests.filter((request) => request.path === '/v1/invoice_payments')).toHaveLength(2);

    const invoiceRow = (id: string, balanceBefore: number) => ({
      reference: `stripe:invoice:${id}`,
      amount: 100,
      balance_before: balanceBefore,
      balance_after: balanceBefore + 100,
      reason: 'subscription_period',
    });
    const invoicePayment = (id: string, status: string, refunded: number) => ({
      provider_payment_id: id,
      kind: 'subscription_invoice',
      product_id: 'premium',
      amount_minor: 999,
      currency: 'usd',
      status,
      ledger_reference: `stripe:invoice:${id}`,
      tokens_granted: 100,
      tokens_refunded: refunded,
      refund_shortfall: 0,
    });
    expect(await stripeStateOf(stack.db, userId)).toEqual({
      balance: 50,
      ledger: [
        invoiceRow(firstInvoice, 0),
        invoiceRow(renewalInvoice, 100),
        {
          reference: `stripe:refund:${currentCharge}`,
          amount: -100,
          balance_before: 200,
          balance_after: 100,
          reason: 'stripe_refund',
        },
        {
          reference: `stripe:refund:${legacyCharge}:500`,
          amount: -50,
          balance_before: 100,
          balance_after: 50,
          reason: 'stripe_refund',
        },
      ],
      payments: [
        invoicePayment(firstInvoice, 'refunded', 100),
        invoicePayment(renewalInvoice, 'partially_refunded', 50),
      ],
      subscriptions: [expect.objectContaining({ subscription_id: subscriptionId, status: 'active' })],
      emails: [
        { provider_payment_id: firstInvoice, to_address: null, status: 'pending' },
        { provider_payment_id: renewalInvoice, to_address: null, status: 'pending' },
      ],
      customers: [customer],
      installments: [],
    });
  });

  /** An inbox row recorded directly (no job): the test runs the engine itself, in a chosen interleaving. */
  const recordRow = async (type: string, object: Record<string, unknown>) => {
    const recorded = await recordInboxEvent(stack.db, toStripeInboxDraftFromBody(stripeEventBody(type, object)));
    if (recorded.kind !== 'recorded') throw new Error('expected a new row');
    return recorded.inboxEventId;
  };
  /** Backends of this test's database waiting for a lock another transaction holds. */
  const lockWaiters = async () =>
    (
      await sql<{ waiting: number }>`SELECT count(*)::int AS waiting FROM pg_stat_activity
        WHERE datname = current_database() AND wait_event_type = 'Lock'`.execute(stack.db)
    ).rows[0]?.waiting ?? 0;
  /** A promise with a flag saying whether it has settled. */
  const watch = <T>(promise: Promise<T>) => {
    const watched = { settled: false, promise };
    void promise.then(
      () => {
        watched.settled = true;
      },
      () => {
        watched.settled = true;
      },
    );
    return watched;
  };
  const gate = () => {
    let open: () => void = () => undefined;
    const opened = new Promise<void>((resolve) => {
      open = resolve;
    });
    return { open, opened };
  };

  /**
   * An annual subscriber whose subscription Tally holds as active, with an `invoice.paid` and a
   * `customer.subscription.deleted` recorded but not run (Stripe already says canceled).
   */
  const annualSubscriberAboutToCancel = async () => {
    const userId = stripeId('user');
    const customer = stripeId('cus');
    const subscriptionId = stripeId('sub');
    const invoiceId = stripeId('in');
    const subscription = { id: subscriptionId, customer, priceId: 'price_premium_annual', userId };
    fake.putSubscription(stripeSubscription(subscription));
    expect(
      await finished(
        await post(
          stripeEventBody('customer.subscription.created', { id: subscriptionId, object: 'subscription', customer }),
        ),
      ),
    ).toMatchObject({ outcome_code: 'subscription_synced' });
    const invoiceRow = await recordRow(
      'invoice.paid',
      stripeAnnualInvoice({ id: invoiceId, subscription: subscriptionId, customer }),
    );
    const deletionRow = await recordRow('customer.subscription.deleted', {
      id: subscriptionId,
      object: 'subscription',
      customer,
    });
    fake.putSubscription(stripeSubscription({ ...subscription, status: 'canceled' }));
    return { userId, subscriptionId, invoiceId, invoiceRow, deletionRow };
  };

  /** What both interleavings must end with: the twelfth credited once, no installment left scheduled. */
  const expectCanceledWithNothingScheduled = async (userId: string, subscriptionId: string, invoiceId: string) => {
    const state = await stripeStateOf(stack.db, userId);
    expect(state.subscriptions).toEqual([
      expect.objectContaining({ subscription_id: subscriptionId, status: 'canceled', billing_interval: 'year' }),
    ]);
    expect(state.balance).toBe(100);
    expect(state.ledger).toEqual([
      {
        reference: `stripe:invoice:${invoiceId}`,
        amount: 100,
        balance_before: 0,
        balance_after: 100,
        reason: 'subscription_annual_first_installment',
      },
    ]);
    expect(state.payments).toEqual([
      expect.objectContaining({ provider_payment_id: invoiceId, kind: 'subscription_invoice', tokens_granted: 100 }),
    ]);
    expect(state.installments.map((row) => [row.sequence, row.status])).toEqual(
      Array.from({ length: 11 }, (_, i) => [i + 1, 'void']),
    );
  };

  it('leaves no installment scheduled when a deletion runs while an annual invoice.paid is mid-transaction', async () => {
    const { userId, subscriptionId, invoiceId, invoiceRow, deletionRow } = await annualSubscriberAboutToCancel();
    const deps = stack.processorDeps();
    // Pause the invoice after it has read its subscription, before it schedules the installments:
    // another transaction holds the user's wallet, which the invoice's ledger entry must lock.
    const walletHeld = gate();
    const walletReleased = gate();
    const holder = stack.db.transaction().execute(async (trx) => {
      await trx.selectFrom('wallets').select('balance').where('user_id', '=', userId).forUpdate().execute();
      walletHeld.open();
      await walletReleased.opened;
    });
    await walletHeld.opened;
    const invoicing = watch(processOne(deps, invoiceRow));
    await eventually('the invoice to wait for the wallet', async () => (await lockWaiters()) >= 1);
    expect(invoicing.settled).toBe(false);

    // The deletion runs now. It must not finish (voiding nothing) while the invoice that read
    // `active` has yet to commit its installments: it waits for the subscription row instead.
    const deleting = watch(processOne(deps, deletionRow));
    await eventually(
      'the deletion to finish or wait for a lock',
      async () => deleting.settled || (await lockWaiters()) >= 2,
    );
    walletReleased.open();
    await holder;
    const [invoice, deletion] = await Promise.all([invoicing.promise, deleting.promise]);
    await expectCanceledWithNothingScheduled(userId, subscriptionId, invoiceId);
    expect(invoice).toMatchObject({
      kind: 'processed',
      code: 'credited',
      detail: expect.stringContaining('11 installments scheduled'),
    });
    expect(deletion).toMatchObject({
      kind: 'processed',
      code: 'subscription_synced',
      detail: expect.stringContaining('11 installments voided'),
    });
  });

  it('leaves no installment scheduled when an annual invoice.paid runs while a deletion is mid-transaction', async () => {
    const { userId, subscriptionId, invoiceId, invoiceRow, deletionRow } = await annualSubscriberAboutToCancel();
    // The deletion's transaction stays open after it saved the subscription as canceled.
    const base = stack.handlers();
    const stripe = base.stripe as InboxHandler<unknown>;
    const applied = gate();
    const commit = gate();
    const pausing = stack.processorDeps({
      handlers: {
        ...base,
        stripe: {
          ...stripe,
          async apply(uow, row, prepared) {
            const result = await stripe.apply(uow, row, prepared);
            if (row.id === deletionRow) {
              applied.open();
              await commit.opened;
            }
            return result;
          },
        },
      },
    });
    const deleting = watch(processOne(pausing, deletionRow));
    await applied.opened;

    // The invoice must not read `active` from before the deletion and schedule eleven
    // installments the deletion (which voided nothing) never sees: it waits for the row.
    const invoicing = watch(processOne(stack.processorDeps(), invoiceRow));
    await eventually(
      'the invoice to finish or wait for a lock',
      async () => invoicing.settled || (await lockWaiters()) >= 1,
    );
    await commit.open();
    const [deletion, invoice] = await Promise.all([deleting.promise, invoicing.promise]);
    await expectCanceledWithNothingScheduled(userId, subscriptionId, invoiceId);
    expect(deletion).toMatchObject({ kind: 'processed', code: 'subscription_synced' });
    expect(invoice).toMatchObject({
      kind: 'processed',
      code: 'credited',
      detail: expect.stringContaining('11 installments scheduled, 11 voided (subscription canceled)'),
    });
  });

  it('keeps the newer read when an older read of the same subscription applies after it, and never revives a canceled one', async () => {
    const userId = stripeId('user');
    const customer = stripeId('cus');
    const subscriptionId = stripeId('sub');
    const monthly = { id: subscriptionId, customer, priceId: 'price_premium_monthly', userId };
    const annual = { ...monthly, priceId: 'price_premium_annual' };
    fake.putSubscription(stripeSubscription(monthly));
    // Rows recorded directly (no job): this test runs the engine itself, in a chosen interleaving.
    const record = async (type: string, object: Record<string, unknown>) => {
      const body = stripeEventBody(type, object);
      const recorded = await recordInboxEvent(stack.db, toStripeInboxDraftFromBody(body));
      if (recorded.kind !== 'recorded') throw new Error('expected a new row');
      return recorded.inboxEventId;
    };
    const first = await record('customer.subscription.updated', stripeSubscription(monthly));
    const second = await record('customer.subscription.updated', stripeSubscription(annual));

    // The first read answers "monthly", then stalls until released.
    const real = stack.ports.stripe;
    if (!real) throw new Error('the stack has no Stripe port');
    let reads = 0;
    let release: () => void = () => undefined;
    const gate = new Promise<void>((resolve) => {
      release = resolve;
    });
    const stalling = {
      ...real,
      async retrieveSubscription(id: string) {
        const subscription = await real.retrieveSubscription(id);
        reads += 1;
        if (reads === 1) await gate;
        return subscription;
      },
    };
    const deps = stack.processorDeps({
      handlers: createInboxHandlers({
        catalog: stack.catalog,
        ports: { ...stack.ports, stripe: stalling },
        policy: stack.policy,
        verifyRevenueCatPurchases: stack.verifyRevenueCatPurchases,
      }),
    });
    const olderRead = processOne(deps, first);
    await eventually('the first read to be made', async () => reads === 1);
    // The customer upgrades to annual; the second event reads that and applies first.
    fake.putSubscription(stripeSubscription(annual));
    expect(await processOne(deps, second)).toMatchObject({ kind: 'processed', code: 'subscription_synced' });
    release();
    expect(await olderRead).toMatchObject({ kind: 'ignored', code: 'stale_read' });
    const saved = () =>
      stack.db
        .selectFrom('stripe_subscriptions')
        .select(['status', 'plan_id', 'billing_interval'])
        .where('subscription_id', '=', subscriptionId)
        .executeTakeFirstOrThrow();
    expect(await saved()).toEqual({ status: 'active', plan_id: 'premium', billing_interval: 'year' });

    // Canceled is final at Stripe: once saved, no read (however late) brings it back.
    const save = (status: string | undefined, readAt: Date) =>
      stack.transaction((uow) =>
        saveStripeSubscription(uow, {
          subscription: stripeSubscription({ ...annual, ...(status ? { status } : {}) }),
          userId,
          catalog: stack.catalog,
          readAt,
        }),
      );
    expect(await save('canceled', new Date(Date.now() + 1_000))).toMatchObject({ stale: false });
    expect(await save(undefined, new Date(Date.now() + 60_000))).toMatchObject({
      stale: true,
      row: { status: 'canceled' },
    });
    expect(await saved()).toMatchObject({ status: 'canceled' });
  });
});
