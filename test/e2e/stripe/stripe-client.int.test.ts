import { RetryLaterError, STRIPE_API_VERSION, StripeUnavailableError } from '@tally/billing-core';
import { FakeStripe } from '../../support/fakes/fake-stripe';

describe('the Stripe client (official SDK against a local fake Stripe API)', () => {
  let fake: FakeStripe;

  beforeAll(async () => {
    fake = await FakeStripe.start();
  });
  afterAll(() => fake.stop());

  const client = (timeoutMs = 5_000) => fake.api(timeoutMs);

  it('sends the pinned API version and an idempotency key on every create, and a repeated key returns the same intent', async () => {
    const stripe = client();
    const params = { amountMinor: 499, currency: 'usd', metadata: { user_id: 'u1', pack_id: 'tokens_100' } };
    const first = await stripe.createPaymentIntent(params, { idempotencyKey: 'topup-tu_same' });
    const again = await stripe.createPaymentIntent(params, { idempotencyKey: 'topup-tu_same' });
    expect(again.id).toBe(first.id);
    const creates = fake.requests.filter((request) => request.method === 'POST');
    expect(creates).toHaveLength(2);
    expect(creates.every((request) => request.idempotencyKey === 'topup-tu_same')).toBe(true);
    expect(creates.every((request) => request.apiVersion === STRIPE_API_VERSION)).toBe(true);
    expect(await stripe.retrievePaymentIntent(String(first.id))).toMatchObject({
      id: first.id,
      metadata: params.metadata,
    });
  });

  it('turns a 429 into RetryLaterError carrying Retry-After, and a 5xx into a retryable StripeUnavailableError', async () => {
    const stripe = client();
    fake.failNext(429, { headers: { 'retry-after': '7' } });
    const limited = await stripe.retrieveSubscription('sub_x').catch((error: unknown) => error);
    expect(limited).toBeInstanceOf(RetryLaterError);
    expect(limited).toMatchObject({ delayMs: 7_000, retryable: true });
    fake.failNext(500);
    const down = await stripe.retrieveSubscription('sub_x').catch((error: unknown) => error);
    expect(down).toBeInstanceOf(StripeUnavailableError);
    expect(down).toMatchObject({ code: 'stripe_unavailable', retryable: true });
    const missing = await stripe.retrieveSubscription('sub_missing').catch((error: unknown) => error);
    expect(missing).toMatchObject({ code: 'stripe_request_failed', retryable: false });
  });

  it('gives up after its timeout with a retryable error', async () => {
    fake.stallNextMs = 1_000;
    const timedOut = await client(200)
      .retrievePaymentIntent('pi_slow')
      .catch((error: unknown) => error);
    expect(timedOut).toBeInstanceOf(StripeUnavailableError);
  });

  it('lists events from the Events API', async () => {
    fake.events.push({ id: 'evt_listed', object: 'event', type: 'invoice.paid' });
    const page = await client().listEvents({ types: ['invoice.paid'], limit: 10 });
    expect(page).toEqual({ data: [expect.objectContaining({ id: 'evt_listed' })], hasMore: false });
    expect(fake.requests.at(-1)).toMatchObject({ method: 'GET', path: '/v1/events' });
  });
});
