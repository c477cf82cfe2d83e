import { STRIPE_API_VERSION } from '@tally/billing-core';
import Stripe from 'stripe';
import { FakeStripe, fakeStripeSecretKey } from '../../support/fakes/fake-stripe';
import type { CardBehaviour } from '../../support/fakes/fake-stripe-off-session';

/**
 * The fake Stripe's saved cards and off-session charges (auto top-up, issue 59), driven by the
 * real SDK so the fake's answers are what the SDK makes of Stripe's: objects, StripeCardError
 * with the PaymentIntent, StripeIdempotencyError, a timeout after the charge was made.
 */
describe('the fake Stripe saves cards and charges them off session (real SDK)', () => {
  let fake: FakeStripe;

  beforeAll(async () => {
    fake = await FakeStripe.start();
  });
  afterAll(() => fake.stop());

  const sdk = (timeout = 5_000) =>
    new Stripe(fakeStripeSecretKey, {
      apiVersion: STRIPE_API_VERSION,
      host: '127.0.0.1',
      port: fake.port,
      protocol: 'http',
      maxNetworkRetries: 0,
      timeout,
      telemetry: false,
    });

  /** A customer with a card saved through a SetupIntent the browser confirmed. */
  const savedCard = async (outcome: CardBehaviour = 'succeeds') => {
    const stripe = sdk();
    const customer = await stripe.customers.create({ metadata: { user_id: 'u_card' } });
    const setupIntent = await stripe.setupIntents.create({ customer: customer.id, usage: 'off_session' });
    const completed = fake.completeSetupIntent(setupIntent.id, outcome);
    return { customer: customer.id, paymentMethod: String(completed.payment_method) };
  };

  const charge = (
    card: { customer: string; paymentMethod: string },
    idempotencyKey: string,
    amount = 1_000,
    stripe = sdk(),
  ) =>
    stripe.paymentIntents.create(
      {
        amount,
        currency: 'usd',
        customer: card.customer,
        payment_method: card.paymentMethod,
        confirm: true,
        off_session: true,
        metadata: { user_id: 'u_card', reason: 'auto_topup' },
      },
      { idempotencyKey },
    );

  const chargesOf = (paymentMethod: string) =>
    fake.offSessionCharges.filter((made) => made.paymentMethod === paymentMethod);

  it('creates a customer and a SetupIntent idempotently, and completing it saves a card to the customer', async () => {
    const stripe = sdk();
    const customer = await stripe.customers.create(
      { email: 'ada@example.com', metadata: { user_id: 'u_ada' } },
      { idempotencyKey: 'customer-u_ada' },
    );
    expect(customer).toMatchObject({ object: 'customer', email: 'ada@example.com', metadata: { user_id: 'u_ada' } });
    expect(customer.id).toMatch(/^cus_fake_/);
    const again = await stripe.customers.create(
      { email: 'ada@example.com', metadata: { user_id: 'u_ada' } },
      { idempotencyKey: 'customer-u_ada' },
    );
    expect(again.id).toBe(customer.id);
    expect([...fake.customers.values()].filter((stored) => stored.email === 'ada@example.com')).toHaveLength(1);

    const params = {
      customer: customer.id,
      metadata: { user_id: 'u_ada' },
      automatic_payment_methods: { enabled: true },
    };
    const setupIntent = await stripe.setupIntents.create(params, { idempotencyKey: 'setup-u_ada' });
    expect(setupIntent).toMatchObject({
      object: 'setup_intent',
      customer: customer.id,
      usage: 'off_session',
      status: 'requires_payment_method',
      payment_method: null,
      metadata: { user_id: 'u_ada' },
      livemode: false,
    });
    expect(setupIntent.id).toMatch(/^seti_fake_/);
    expect(setupIntent.client_secret).toMatch(new RegExp(`^${setupIntent.id}_secret_.+`));
    expect((await stripe.setupIntents.create(params, { idempotencyKey: 'setup-u_ada' })).id).toBe(setupIntent.id);
    expect(fake.setupIntents.size).toBe(1);

    const completed = fake.completeSetupIntent(setupIntent.id);
    expect(completed).toMatchObject({ id: setupIntent.id, status: 'succeeded' });
    expect(String(completed.payment_method)).toMatch(/^pm_fake_/);
    expect(await stripe.setupIntents.retrieve(setupIntent.id)).toMatchObject({
      status: 'succeeded',
      payment_method: completed.payment_method,
    });
    const card = await stripe.paymentMethods.retrieve(String(completed.payment_method));
    expect(card).toMatchObject({
      object: 'payment_method',
      type: 'card',
      customer: customer.id,
      card: { brand: 'visa', last4: '4242' },
    });
    expect(card.card?.exp_year).toBeGreaterThan(new Date().getUTCFullYear());
    expect(() => fake.completeSetupIntent(setupIntent.id)).toThrow(/not awaiting a card/);
  });

  it('charges a card that succeeds: a succeeded PaymentIntent with the amount received and a charge', async () => {
    const card = await savedCard('succeeds');
    const intent = await charge(card, 'auto-ok');
    expect(intent).toMatchObject({
      object: 'payment_intent',
      status: 'succeeded',
      amount: 1_000,
      amount_received: 1_000,
      currency: 'usd',
      customer: card.customer,
      payment_method: card.paymentMethod,
      metadata: { user_id: 'u_card', reason: 'auto_topup' },
      livemode: false,
    });
    expect(intent.latest_charge).toMatch(/^ch_fake_/);
    expect(intent.client_secret).toMatch(new RegExp(`^${intent.id}_secret_`));
    expect(fake.paymentIntents.get(intent.id)).toMatchObject({ status: 'succeeded' });
    expect(chargesOf(card.paymentMethod)).toEqual([
      expect.objectContaining({
        paymentIntent: intent.id,
        amount: 1_000,
        outcome: 'succeeds',
        idempotencyKey: 'auto-ok',
      }),
    ]);
  });

  it.each([
    ['declines', 'card_declined', 'insufficient_funds'],
    ['requires_authentication', 'authentication_required', 'authentication_required'],
  ] as const)(
    'a card that %s is refused with a 402 StripeCardError carrying the PaymentIntent',
    async (outcome, code, declineCode) => {
      const card = await savedCard(outcome);
      const refused = await charge(card, `auto-${outcome}`).catch((error: unknown) => error);
      expect(refused).toBeInstanceOf(Stripe.errors.StripeCardError);
      const error = refused as Stripe.errors.StripeCardError;
      expect(error).toMatchObject({ statusCode: 402, code, decline_code: declineCode });
      const intent = error.payment_intent;
      expect(intent).toMatchObject({
        status: 'requires_payment_method',
        customer: card.customer,
        amount_received: 0,
        last_payment_error: { type: 'card_error', code, decline_code: declineCode },
      });
      expect(intent?.client_secret).toMatch(new RegExp(`^${intent?.id}_secret_`));
      expect(fake.paymentIntents.get(String(intent?.id))).toMatchObject({ status: 'requires_payment_method' });
      expect(chargesOf(card.paymentMethod)).toEqual([expect.objectContaining({ paymentIntent: intent?.id, outcome })]);
    },
  );

  it('a processing charge answers 200 processing, and setPaymentIntentStatus settles it later', async () => {
    const card = await savedCard('processing');
    const intent = await charge(card, 'auto-processing');
    expect(intent).toMatchObject({ status: 'processing', amount_received: 0 });
    fake.setPaymentIntentStatus(intent.id, 'succeeded');
    expect(await sdk().paymentIntents.retrieve(intent.id)).toMatchObject({
      status: 'succeeded',
      amount_received: 1_000,
    });
  });

  it('setCardBehaviour changes how the saved card is charged next', async () => {
    const card = await savedCard('succeeds');
    expect((await charge(card, 'auto-before')).status).toBe('succeeded');
    fake.setCardBehaviour(card.paymentMethod, 'declines');
    const refused = await charge(card, 'auto-after').catch((error: unknown) => error);
    expect(refused).toMatchObject({ statusCode: 402, decline_code: 'insufficient_funds' });
  });

  it('refuses an unknown card, or one saved to another customer, with a 400 resource_missing and no charge', async () => {
    const card = await savedCard('succeeds');
    const other = await savedCard('succeeds');
    const before = fake.offSessionCharges.length;
    for (const wrong of [
      { customer: card.customer, paymentMethod: 'pm_fake_nope' },
      { customer: card.customer, paymentMethod: other.paymentMethod },
    ]) {
      const refused = await charge(wrong, `auto-wrong-${wrong.paymentMethod}`).catch((error: unknown) => error);
      expect(refused).toBeInstanceOf(Stripe.errors.StripeInvalidRequestError);
      expect(refused).toMatchObject({ statusCode: 400, code: 'resource_missing', param: 'payment_method' });
    }
    expect(fake.offSessionCharges).toHaveLength(before);
  });

  it('replays the first answer under a key, the 402 included, without charging again', async () => {
    const card = await savedCard('succeeds');
    const stripe = sdk();
    const first = await charge(card, 'auto-replay', 1_000, stripe);
    const replay = await charge(card, 'auto-replay', 1_000, stripe);
    expect(replay.id).toBe(first.id);
    expect(replay.lastResponse.headers['idempotent-replayed']).toBe('true');
    expect(chargesOf(card.paymentMethod)).toHaveLength(1);

    const declining = await savedCard('declines');
    const refused = await charge(declining, 'auto-replay-402').catch((error: unknown) => error);
    fake.setCardBehaviour(declining.paymentMethod, 'succeeds');
    const replayed = await charge(declining, 'auto-replay-402').catch((error: unknown) => error);
    expect(replayed).toBeInstanceOf(Stripe.errors.StripeCardError);
    expect(replayed).toMatchObject({
      decline_code: 'insufficient_funds',
      payment_intent: { id: (refused as Stripe.errors.StripeCardError).payment_intent?.id },
    });
    expect(chargesOf(declining.paymentMethod)).toHaveLength(1);
  });

  it('answers the same key with other parameters, or on another endpoint, with an idempotency_error', async () => {
    const card = await savedCard('succeeds');
    await charge(card, 'auto-mismatch', 1_000);
    const otherAmount = await charge(card, 'auto-mismatch', 2_000).catch((error: unknown) => error);
    expect(otherAmount).toBeInstanceOf(Stripe.errors.StripeIdempotencyError);
    expect(otherAmount).toMatchObject({ statusCode: 400, rawType: 'idempotency_error' });
    expect((otherAmount as Error).message).toMatch(/same parameters/);
    const otherEndpoint = await sdk()
      .customers.create({}, { idempotencyKey: 'auto-mismatch' })
      .catch((error: unknown) => error);
    expect(otherEndpoint).toBeInstanceOf(Stripe.errors.StripeIdempotencyError);
    expect((otherEndpoint as Error).message).toMatch(/same endpoint/);
    const plainCreate = await sdk()
      .paymentIntents.create({ amount: 1_000, currency: 'usd' }, { idempotencyKey: 'auto-mismatch' })
      .catch((error: unknown) => error);
    expect(plainCreate).toBeInstanceOf(Stripe.errors.StripeIdempotencyError);
    expect(chargesOf(card.paymentMethod)).toHaveLength(1);
  });

  it('a client that times out after the charge was made gets the stored answer at once when it retries the key', async () => {
    const card = await savedCard('succeeds');
    fake.stallAfterChargeMs = 10_000;
    const timedOut = await charge(card, 'auto-stalled', 1_000, sdk(300)).catch((error: unknown) => error);
    expect(timedOut).toBeInstanceOf(Stripe.errors.StripeConnectionError);
    expect(fake.stallAfterChargeMs).toBe(0);
    const made = chargesOf(card.paymentMethod);
    expect(made).toHaveLength(1);
    expect(fake.paymentIntents.get(String(made[0]?.paymentIntent))).toMatchObject({ status: 'succeeded' });

    const startedAt = Date.now();
    const retried = await charge(card, 'auto-stalled');
    expect(Date.now() - startedAt).toBeLessThan(2_000);
    expect(retried).toMatchObject({ id: made[0]?.paymentIntent, status: 'succeeded', amount_received: 1_000 });
    expect(chargesOf(card.paymentMethod)).toHaveLength(1);
    const posts = fake.requests.filter((request) => request.idempotencyKey === 'auto-stalled');
    expect(posts).toHaveLength(2);
  });
});
