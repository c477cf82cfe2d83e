import {
  BillingError,
  createRevenueCatApiClient,
  parseRetryAfterMs,
  RetryLaterError,
  RevenueCatRequestRejectedError,
  RevenueCatUnavailableError,
} from '@tally/billing-core';
import { daysFromNow, FakeRevenueCat, fakeRevenueCatApiKey } from '../../support/fakes/fake-revenuecat';

describe('the RevenueCat REST client', () => {
  let fake: FakeRevenueCat;
  beforeAll(async () => {
    fake = await FakeRevenueCat.start();
  });
  afterAll(() => fake.stop());

  const client = (overrides: { apiKey?: string; timeoutMs?: number } = {}) =>
    createRevenueCatApiClient({
      apiKey: overrides.apiKey ?? fakeRevenueCatApiKey,
      baseUrl: `${fake.baseUrl}/`,
      timeoutMs: overrides.timeoutMs ?? 2_000,
    });

  it('reads a subscriber with the bearer key and a URL-encoded id', async () => {
    const id = '$RCAnonymousID:ab/c d?e#f';
    const expires = daysFromNow(10);
    fake.setSubscriber(id, { 'premium.monthly': { expires_date: expires, store: 'app_store', is_sandbox: false } });
    const read = await client().getSubscriber(id);
    expect(read).toEqual({
      requestDateMs: expect.any(Number),
      created: false,
      subscriber: expect.objectContaining({
        original_app_user_id: id,
        subscriptions: {
          'premium.monthly': expect.objectContaining({ expires_date: expires, store: 'app_store', is_sandbox: false }),
        },
      }),
    });
    expect(fake.callsFor(id)).toBe(1);
  });

  it('reports a 201 (the read created the customer) and tells onCustomerCreated, once per created customer', async () => {
    const created: string[] = [];
    const observed = createRevenueCatApiClient({
      apiKey: fakeRevenueCatApiKey,
      baseUrl: fake.baseUrl,
      timeoutMs: 2_000,
      onCustomerCreated: (appUserId) => created.push(appUserId),
    });
    const read = await observed.getSubscriber('client-unknown-1');
    expect(read.created).toBe(true);
    expect(read.subscriber.subscriptions).toEqual({});
    expect(fake.unknownRequested).toContain('client-unknown-1');
    // The customer exists now: a second read is a 200.
    expect((await observed.getSubscriber('client-unknown-1')).created).toBe(false);
    expect(created).toEqual(['client-unknown-1']);
  });

  it('turns a 429 into RetryLaterError with the Retry-After delay (seconds or HTTP date)', async () => {
    fake.setSubscriber('client-429', {});
    fake.script('client-429', { status: 429, retryAfter: '7' });
    const seconds = await client()
      .getSubscriber('client-429')
      .catch((error) => error);
    expect(seconds).toBeInstanceOf(RetryLaterError);
    expect(seconds.delayMs).toBe(7_000);

    fake.script('client-429', { status: 429, retryAfter: new Date(Date.now() + 60_000).toUTCString() });
    const date = await client()
      .getSubscriber('client-429')
      .catch((error) => error);
    expect(date).toBeInstanceOf(RetryLaterError);
    expect(date.delayMs).toBeGreaterThan(55_000);
    expect(date.delayMs).toBeLessThanOrEqual(60_000);

    fake.script('client-429', { status: 429 });
    const none = await client()
      .getSubscriber('client-429')
      .catch((error) => error);
    expect(none).toBeInstanceOf(RetryLaterError);
    expect(none.delayMs).toBeUndefined();
  });

  it('parses Retry-After values', () => {
    const now = Date.parse('2025-01-01T00:00:00Z');
    expect(parseRetryAfterMs('120', now)).toBe(120_000);
    expect(parseRetryAfterMs('Wed, 01 Jan 2025 00:00:30 GMT', now)).toBe(30_000);
    expect(parseRetryAfterMs('Tue, 31 Dec 2024 00:00:00 GMT', now)).toBe(0);
    expect(parseRetryAfterMs('soon', now)).toBeUndefined();
    expect(parseRetryAfterMs(null, now)).toBeUndefined();
  });

  it('makes 5xx, timeouts, network errors and unreadable bodies retryable', async () => {
    fake.setSubscriber('client-5xx', {});
    fake.script('client-5xx', { status: 503 });
    const server = await client()
      .getSubscriber('client-5xx')
      .catch((error) => error);
    expect(server).toBeInstanceOf(RevenueCatUnavailableError);
    expect(server).toMatchObject({ code: 'revenuecat_unavailable', retryable: true });

    fake.script('client-5xx', { status: 200, delayMs: 1_000 });
    const slow = await client({ timeoutMs: 100 })
      .getSubscriber('client-5xx')
      .catch((error) => error);
    expect(slow).toMatchObject({ code: 'revenuecat_unavailable', retryable: true });
    expect(slow.message).toContain('no answer within 100 ms');

    fake.script('client-5xx', { status: 200, body: '<html>proxy</html>' });
    const html = await client()
      .getSubscriber('client-5xx')
      .catch((error) => error);
    expect(html).toMatchObject({ code: 'revenuecat_unavailable', retryable: true });

    const closed = await createRevenueCatApiClient({ apiKey: 'k', baseUrl: 'http://127.0.0.1:1', timeoutMs: 1_000 })
      .getSubscriber('anyone')
      .catch((error) => error);
    expect(closed).toMatchObject({ code: 'revenuecat_unavailable', retryable: true });
  });

  it('makes other 4xx answers (a wrong key) non-retryable', async () => {
    const error = await client({ apiKey: 'wrong' })
      .getSubscriber('client-401')
      .catch((caught) => caught);
    expect(error).toBeInstanceOf(RevenueCatRequestRejectedError);
    expect(error).toBeInstanceOf(BillingError);
    expect(error).toMatchObject({ code: 'revenuecat_rejected', retryable: false, status: 401 });
  });
});
