import { auditOf } from '../../support/audit';
import { attemptsOf, debit, fund, messagesOf, saveCard, setAutoTopup } from '../../support/auto-topup';
import { eventually, readJson } from '../../support/stack';
import { stripeDispute, stripeEventBody, stripeId, stripeRefundedCharge } from '../../support/stripe-events';
import { suiteStackWithFakeStripe } from '../../support/suite';

/**
 * Auto top-up (docs/auto-topup.md) over HTTP against real Postgres and Redis, Stripe faked as a
 * local server: the spends through the api write the attempts, the worker's auto-topup loop
 * charges them off session, the webhooks go through ingest and the inbox.
 */
describe('auto top-up', () => {
  const { stack, fake } = suiteStackWithFakeStripe({
    stripeTimeoutMs: 1_000,
    worker: {
      roles: ['inbox', 'relay', 'auto-topup'],
      autoTopup: { intervalMs: 50, leaseMs: 3_000, backoff: { baseDelayMs: 100, maxDelayMs: 300 } },
    },
  });
  let seq = 0;
  const newUser = () => `autotopup-${++seq}-${Date.now().toString(36)}`;

  const balanceOf = async (userId: string) =>
    (await readJson(await stack.apiRequest(`/v1/users/${userId}/wallet`))) as { balance: number; available: number };
  const chargesOf = (customerOf: string) => fake.offSessionCharges.filter((charge) => charge.customer === customerOf);
  const customerOfUser = async (userId: string) =>
    (
      await stack.db
        .selectFrom('saved_payment_methods')
        .select('stripe_customer_id')
        .where('user_id', '=', userId)
        .executeTakeFirstOrThrow()
    ).stripe_customer_id;
  const settled = (userId: string, count = 1) =>
    eventually(`${count} finished attempt(s) of ${userId}`, async () => {
      const attempts = await attemptsOf(stack, userId);
      const finished = attempts.filter((a) => a.status !== 'pending' && a.status !== 'processing');
      return finished.length >= count && attempts.length === finished.length ? attempts : undefined;
    });
  /** Lets the loop run a few passes (50 ms apart) so an attempt that should not exist would have. */
  const afterSomePasses = () => new Promise((resolve) => setTimeout(resolve, 400));
  const topupCredits = async (userId: string) =>
    stack.db
      .selectFrom('ledger_entries')
      .select(['reference', 'amount', 'reason'])
      .where('user_id', '=', userId)
      .where('reason', '=', 'topup')
      .execute();

  it('saves a card through the SetupIntent and its webhook, and shows the settings', async () => {
    const userId = newUser();
    const before = (await readJson(await stack.apiRequest(`/v1/users/${userId}/auto-topup`))) as Record<
      string,
      unknown
    >;
    expect(before).toMatchObject({
      userId,
      enabled: false,
      packId: null,
      paymentMethod: null,
      thisMonth: 0,
      inFlight: null,
    });
    const paymentMethodId = await saveCard(stack, fake, userId);
    const customerId = await customerOfUser(userId);
    expect(fake.customers.get(customerId)?.metadata).toEqual({ user_id: userId });
    // A second setup reuses the customer.
    const again = await stack.apiRequest(`/v1/users/${userId}/payment-methods/setup`, { method: 'POST' });
    expect(((await readJson(again)) as { customerId: string }).customerId).toBe(customerId);
    const view = await setAutoTopup(stack, userId, { threshold: 30, monthlyLimit: 3 });
    expect(view).toMatchObject({
      userId,
      enabled: true,
      packId: 'tokens_100',
      threshold: 30,
      monthlyLimit: 3,
      failuresInARow: 0,
      disabledReason: null,
      paymentMethod: { id: paymentMethodId, customerId },
    });
    const unknownPack = await stack.apiRequest(`/v1/users/${userId}/auto-topup`, {
      method: 'PUT',
      body: { packId: 'no_such_pack', threshold: 30, monthlyLimit: 3, enabled: true },
    });
    expect(unknownPack.status).toBe(400);
    expect(((await readJson(unknownPack)) as { error: { code: string } }).error.code).toBe('unknown_pack');
    const removed = await stack.apiRequest(`/v1/users/${userId}/auto-topup`, { method: 'DELETE' });
    expect(await readJson(removed)).toMatchObject({
      enabled: false,
      packId: null,
      paymentMethod: { id: paymentMethodId },
    });
  });

  it('is never triggered for a user who did not opt in, has no card, or turned it off', async () => {
    const noSettings = newUser();
    await saveCard(stack, fake, noSettings);
    const noCard = newUser();
    await setAutoTopup(stack, noCard, { threshold: 50 });
    const turnedOff = newUser();
    await saveCard(stack, fake, turnedOff);
    await setAutoTopup(stack, turnedOff, { threshold: 50, enabled: false });
    for (const userId of [noSettings, noCard, turnedOff]) {
      await fund(stack, userId, 100);
      expect(await debit(stack, userId, 90, 'dip')).toBe(201);
    }
    await afterSomePasses();
    for (const userId of [noSettings, noCard, turnedOff]) {
      expect(await attemptsOf(stack, userId)).toEqual([]);
      expect((await balanceOf(userId)).balance).toBe(10);
    }
  });

  it('is triggered by every kind of spend: a debit, a usage, a hold and a paid studio request', async () => {
    const spends: [string, (userId: string) => Promise<void>][] = [
      ['debit', async (userId) => expect(await debit(stack, userId, 1, 'one')).toBe(201)],
      [
        'usage',
        async (userId) => {
          const used = await stack.apiRequest(`/v1/users/${userId}/usage`, {
            method: 'POST',
            body: { reference: `${userId}-video`, feature: 'video', quantity: 3 },
          });
          expect(await readJson(used)).toMatchObject({ cost: 6 });
        },
      ],
      [
        'hold',
        async (userId) => {
          const held = await stack.apiRequest(`/v1/users/${userId}/holds`, {
            method: 'POST',
            body: { reference: `${userId}-hold`, amount: 10, expiresInSeconds: 600 },
          });
          expect(held.status).toBe(201);
        },
      ],
      [
        'studio',
        async (userId) => {
          // The first two music requests of the day are free; the third is debited.
          for (const n of [1, 2, 3]) {
            const created = await stack.apiRequest(`/v1/users/${userId}/studio/requests`, {
              method: 'POST',
              body: { kind: 'music', durationSeconds: 10, input: { prompt: `song ${n}` } },
            });
            expect(((await readJson(created)) as { tokensCharged: number }).tokensCharged).toBe(n === 3 ? 5 : 0);
          }
        },
      ],
    ];
    for (const [kind, spend] of spends) {
      const userId = `${newUser()}-${kind}`;
      await saveCard(stack, fake, userId);
      await setAutoTopup(stack, userId, { threshold: 100 });
      await fund(stack, userId, 100);
      await spend(userId);
      const [attempt, ...others] = await settled(userId);
      expect([kind, attempt?.status, others.length]).toEqual([kind, 'succeeded', 0]);
    }
  });

  it('makes one charge and one credit for one dip below the threshold under ten concurrent spends', async () => {
    const userId = newUser();
    await saveCard(stack, fake, userId);
    await setAutoTopup(stack, userId, { threshold: 50 });
    await fund(stack, userId, 100);
    const statuses = await Promise.all(Array.from({ length: 10 }, (_, i) => debit(stack, userId, 8, `spend-${i}`)));
    expect(statuses).toEqual(Array(10).fill(201));
    const [attempt, ...others] = await settled(userId);
    expect(others).toEqual([]);
    expect(attempt).toMatchObject({ status: 'succeeded', pack_id: 'tokens_100', threshold: 50 });
    expect(Number(attempt?.available_after)).toBeLessThan(50);
    const customerId = await customerOfUser(userId);
    expect(chargesOf(customerId)).toHaveLength(1);
    expect(await topupCredits(userId)).toEqual([
      { reference: `stripe:payment:${attempt?.payment_intent_id}`, amount: 100, reason: 'topup' },
    ]);
    expect((await balanceOf(userId)).balance).toBe(120);
    const request = fake.requests.find(
      (r) =>
        r.path === '/v1/payment_intents' && r.form.off_session === 'true' && r.form['metadata[user_id]'] === userId,
    );
    expect(request?.idempotencyKey).toBe(`autotopup:${attempt?.id}`);
    expect(request?.form).toMatchObject({
      confirm: 'true',
      'metadata[user_id]': userId,
      'metadata[pack_id]': 'tokens_100',
      'metadata[topup_reference]': `autotopup:${attempt?.id}`,
    });
  });

  it('credits once when the webhook and the re-read of a processing charge race', async () => {
    const userId = newUser();
    await saveCard(stack, fake, userId, 'processing');
    await setAutoTopup(stack, userId, { threshold: 50 });
    await fund(stack, userId, 60);
    expect(await debit(stack, userId, 20, 'dip')).toBe(201);
    const processing = await eventually('the attempt to be processing', async () => {
      const [attempt] = await attemptsOf(stack, userId);
      return attempt?.status === 'processing' ? attempt : undefined;
    });
    const paymentIntentId = String(processing.payment_intent_id);
    const intent = fake.setPaymentIntentStatus(paymentIntentId, 'succeeded');
    // The loop re-reads the processing charge every 100-300 ms; the webhook arrives meanwhile.
    const rows = await Promise.all(
      [0, 1].map(async () =>
        stack.finishedInboxRow(
          'stripe',
          await stack.deliverStripe(stripeEventBody('payment_intent.succeeded', intent)),
        ),
      ),
    );
    const [attempt] = await settled(userId);
    expect(attempt?.status).toBe('succeeded');
    expect(
      rows.map((row) => row.outcome_code).every((code) => code === 'credited' || code === 'already_credited'),
    ).toBe(true);
    expect(await topupCredits(userId)).toHaveLength(1);
    expect((await balanceOf(userId)).balance).toBe(140);
  });

  it('tells the app of each failure, counts it, and turns auto top-up off at the third in a row', async () => {
    const userId = newUser();
    const paymentMethodId = await saveCard(stack, fake, userId, 'declines');
    await setAutoTopup(stack, userId, { threshold: 50 });
    await fund(stack, userId, 100);
    const counted = () => stack.workers[0]?.metrics.autoTopupAttempts.get();
    const countOf = async (outcome: string) =>
      (await counted())?.values.find((value) => value.labels.outcome === outcome)?.value ?? 0;
    const declinedBefore = await countOf('declined');
    const actionBefore = await countOf('requires_action');

    expect(await debit(stack, userId, 60, 'dip-1')).toBe(201);
    await settled(userId, 1);
    fake.setCardBehaviour(paymentMethodId, 'requires_authentication');
    expect(await debit(stack, userId, 1, 'dip-2')).toBe(201);
    await settled(userId, 2);
    fake.setCardBehaviour(paymentMethodId, 'declines');
    expect(await debit(stack, userId, 1, 'dip-3')).toBe(201);
    const attempts = await settled(userId, 3);
    expect(attempts.map((a) => [a.status, a.failure_code, a.requires_action])).toEqual([
      ['failed', 'insufficient_funds', false],
      ['failed', 'authentication_required', true],
      ['failed', 'insufficient_funds', false],
    ]);
    // The app reads them too, newest first.
    const listed = (await readJson(await stack.apiRequest(`/v1/users/${userId}/auto-topup/attempts`))) as {
      attempts: { id: string; status: string; failureCode: string; requiresAction: boolean; reference: string }[];
    };
    expect(listed.attempts.map((a) => [a.id, a.status, a.failureCode, a.requiresAction, a.reference])).toEqual(
      [...attempts].reverse().map((a) => [a.id, 'failed', a.failure_code, a.requires_action, `autotopup:${a.id}`]),
    );
    const failed = await messagesOf(stack, userId, 'wallet.auto_topup_failed');
    expect(failed.map((m) => [m.attemptId, m.code, m.requiresAction])).toEqual(
      attempts.map((a) => [a.id, a.failure_code, a.requires_action]),
    );
    expect(failed[1]?.clientSecret).toEqual(expect.stringContaining('_secret_'));
    expect(await messagesOf(stack, userId, 'wallet.auto_topup_disabled')).toEqual([
      { userId, reason: 'failures', failuresInARow: 3 },
    ]);
    expect(await countOf('declined')).toBe(declinedBefore + 2);
    expect(await countOf('requires_action')).toBe(actionBefore + 1);
    const view = (await readJson(await stack.apiRequest(`/v1/users/${userId}/auto-topup`))) as Record<string, unknown>;
    expect(view).toMatchObject({ enabled: false, disabledReason: 'failures', failuresInARow: 3, inFlight: null });
    // Off: a fourth dip writes nothing, until the app enables it again.
    expect(await debit(stack, userId, 1, 'dip-4')).toBe(201);
    await afterSomePasses();
    expect(await attemptsOf(stack, userId)).toHaveLength(3);
    fake.setCardBehaviour(paymentMethodId, 'succeeds');
    expect(await setAutoTopup(stack, userId, { threshold: 50 })).toMatchObject({
      enabled: true,
      failuresInARow: 0,
      disabledReason: null,
    });
    expect(await debit(stack, userId, 1, 'dip-5')).toBe(201);
    expect((await settled(userId, 4))[3]?.status).toBe('succeeded');
    expect(await topupCredits(userId)).toHaveLength(1);
  });

  it('stops at the monthly limit', async () => {
    const userId = newUser();
    await saveCard(stack, fake, userId);
    await setAutoTopup(stack, userId, { threshold: 50, monthlyLimit: 1 });
    await fund(stack, userId, 60);
    expect(await debit(stack, userId, 20, 'dip-1')).toBe(201);
    expect((await settled(userId, 1))[0]?.status).toBe('succeeded');
    expect(await debit(stack, userId, 120, 'dip-2')).toBe(201);
    await afterSomePasses();
    expect(await attemptsOf(stack, userId)).toHaveLength(1);
    expect((await balanceOf(userId)).balance).toBe(20);
    const view = (await readJson(await stack.apiRequest(`/v1/users/${userId}/auto-topup`))) as Record<string, unknown>;
    expect(view).toMatchObject({ thisMonth: 1, monthlyLimit: 1, enabled: true });
  });

  it('resolves a Stripe timeout after the charge was made with the same key: one PaymentIntent', async () => {
    const userId = newUser();
    await saveCard(stack, fake, userId);
    await setAutoTopup(stack, userId, { threshold: 50 });
    await fund(stack, userId, 60);
    fake.stallAfterChargeMs = 2_500;
    expect(await debit(stack, userId, 20, 'dip')).toBe(201);
    const [attempt] = await settled(userId);
    expect(attempt).toMatchObject({ status: 'succeeded' });
    expect(attempt?.tries).toBeGreaterThanOrEqual(2);
    const key = `autotopup:${attempt?.id}`;
    expect(fake.requests.filter((r) => r.idempotencyKey === key).length).toBeGreaterThanOrEqual(2);
    expect(chargesOf(await customerOfUser(userId))).toHaveLength(1);
    expect(await topupCredits(userId)).toHaveLength(1);
    expect((await balanceOf(userId)).balance).toBe(140);
  });

  it("support reads a user's auto top-up and turns it off (audited; the app told; enabling it again turns it on)", async () => {
    const userId = newUser();
    await saveCard(stack, fake, userId);
    await setAutoTopup(stack, userId, { threshold: 50 });
    await fund(stack, userId, 60);
    expect(await debit(stack, userId, 20, 'dip')).toBe(201);
    await settled(userId);
    const read = (await readJson(await stack.apiRequest(`/admin/users/${userId}/auto-topup`))) as {
      autoTopup: Record<string, unknown>;
      attempts: Record<string, unknown>[];
    };
    expect(read.autoTopup).toMatchObject({ userId, enabled: true, threshold: 50, thisMonth: 1 });
    expect(read.attempts).toEqual([expect.objectContaining({ status: 'succeeded', packId: 'tokens_100' })]);
    const before = await auditOf(stack.db, { action: 'auto_topup.disable' });
    const disable = () =>
      stack
        .apiRequest(`/admin/users/${userId}/auto-topup/disable`, {
          method: 'POST',
          body: { note: 'card reported stolen' },
        })
        .then(readJson);
    expect(await disable()).toEqual({ userId, disabled: true });
    expect(await disable()).toEqual({ userId, disabled: false });
    expect((await auditOf(stack.db, { action: 'auto_topup.disable' })).slice(before.length)).toEqual(
      [0, 1].map(() => ({
        action: 'auto_topup.disable',
        surface: 'api',
        target_kind: 'user',
        target_id: userId,
        status_code: 200,
        outcome: 'ok',
      })),
    );
    expect(await messagesOf(stack, userId, 'wallet.auto_topup_disabled')).toEqual([
      { userId, reason: 'operator', failuresInARow: 0 },
    ]);
    expect(await debit(stack, userId, 60, 'dip-2')).toBe(201);
    await afterSomePasses();
    expect(await attemptsOf(stack, userId)).toHaveLength(1);
    expect(await setAutoTopup(stack, userId, { threshold: 50 })).toMatchObject({ enabled: true, disabledReason: null });
  });

  it('takes a refunded or disputed auto top-up back like any top-up', async () => {
    const topUp = async () => {
      const userId = newUser();
      await saveCard(stack, fake, userId);
      await setAutoTopup(stack, userId, { threshold: 50, monthlyLimit: 1 });
      await fund(stack, userId, 60);
      expect(await debit(stack, userId, 20, 'dip')).toBe(201);
      const [attempt] = await settled(userId);
      const paymentIntentId = String(attempt?.payment_intent_id);
      const charge = String(fake.paymentIntents.get(paymentIntentId)?.latest_charge);
      expect((await balanceOf(userId)).balance).toBe(140);
      return { userId, paymentIntentId, charge };
    };
    const refunded = await topUp();
    const refund = stripeEventBody(
      'charge.refunded',
      stripeRefundedCharge({ id: refunded.charge, paymentIntent: refunded.paymentIntentId }),
    );
    expect((await stack.finishedInboxRow('stripe', await stack.deliverStripe(refund))).outcome_code).toBe('refunded');
    expect((await balanceOf(refunded.userId)).balance).toBe(40);

    const disputed = await topUp();
    const dispute = stripeDispute({
      id: stripeId('dp'),
      charge: disputed.charge,
      paymentIntent: disputed.paymentIntentId,
      withdrawn: true,
    });
    fake.putDispute(dispute);
    const withdrawn = stripeEventBody('charge.dispute.funds_withdrawn', dispute);
    expect((await stack.finishedInboxRow('stripe', await stack.deliverStripe(withdrawn))).outcome_code).toBe(
      'dispute_funds_withdrawn',
    );
    expect((await balanceOf(disputed.userId)).balance).toBe(40);
  });
});
