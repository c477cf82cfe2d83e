import { createHash } from 'node:crypto';
import { request } from 'node:http';
import { inboxIndexColumns, type Provider } from '@tally/billing-core';
import { eventually, readJson, revenueCatAuth, signStripe, TestStack } from '../../support/stack';

/** What ingest stored for one event: every column it writes, and the state it starts in. */
async function storedRow(stack: TestStack, provider: Provider, providerEventId: string) {
  const rows = await stack.db
    .selectFrom('inbox_events')
    .select([...inboxIndexColumns, 'raw_body', 'status', 'attempts', 'last_error'])
    .where('provider', '=', provider)
    .where('provider_event_id', '=', providerEventId)
    .execute();
  expect(rows).toHaveLength(1);
  return rows[0];
}

const digestKey = (id: string) => `sha256:${createHash('sha256').update(JSON.stringify(id)).digest('hex')}`;
const long = (prefix: string) => `${prefix}${'x'.repeat(300)}`;

const unindexed = {
  livemode: null,
  environment: null,
  user_id: null,
  provider_customer_id: null,
  provider_subscription_id: null,
  provider_payment_intent_id: null,
  provider_invoice_id: null,
};

describe('authenticated webhooks with odd bodies', () => {
  let stack: TestStack;

  // No worker: the rows stay exactly as ingest wrote them.
  beforeAll(async () => {
    stack = await TestStack.start();
  });
  afterAll(() => stack.stop());

  const revenueCat = (event: Record<string, unknown>) => JSON.stringify({ api_version: '1.0', event });

  it.each<[string, Record<string, unknown>, string, Record<string, unknown>]>([
    [
      'event_timestamp_ms as a string',
      {
        id: 'rc-odd-timestamp',
        type: 'NON_RENEWING_PURCHASE',
        app_user_id: 'odd-user-1',
        original_app_user_id: 'odd-user-1',
        event_timestamp_ms: '1700000000100',
        environment: 'PRODUCTION',
      },
      'rc-odd-timestamp',
      { livemode: true, environment: 'production', user_id: 'odd-user-1', provider_customer_id: 'odd-user-1' },
    ],
    [
      'aliases containing null',
      {
        id: 'rc-odd-aliases',
        type: 'INITIAL_PURCHASE',
        app_user_id: 'odd-user-2',
        aliases: ['odd-user-2', null, 7],
        environment: 'SANDBOX',
      },
      'rc-odd-aliases',
      { livemode: false, environment: 'sandbox', user_id: 'odd-user-2' },
    ],
    [
      'a numeric app_user_id',
      { id: 'rc-odd-numeric-user', type: 'NON_RENEWING_PURCHASE', app_user_id: 12345, original_app_user_id: 12345 },
      'rc-odd-numeric-user',
      {},
    ],
    [
      'a NUL in app_user_id',
      {
        id: 'rc-odd-nul-user',
        type: 'NON_RENEWING_PURCHASE',
        app_user_id: 'user\u0000x',
        original_app_user_id: 'odd-original',
      },
      'rc-odd-nul-user',
      { provider_customer_id: 'odd-original' },
    ],
    [
      'a NUL in the event id',
      { id: 'rc-odd-nul\u0000id', type: 'NON_RENEWING_PURCHASE', app_user_id: 'odd-user-3' },
      digestKey('rc-odd-nul\u0000id'),
      { user_id: 'odd-user-3' },
    ],
    [
      'an event id longer than 255 characters',
      { id: long('rc-odd-long-id-'), type: 'RENEWAL', app_user_id: 'odd-user-4' },
      digestKey(long('rc-odd-long-id-')),
      { user_id: 'odd-user-4' },
    ],
    [
      'a numeric event id',
      { id: 987654321, type: 'RENEWAL', app_user_id: 'odd-user-5' },
      '987654321',
      { user_id: 'odd-user-5' },
    ],
    [
      'overlong ids in every index column',
      {
        id: 'rc-odd-long-index',
        type: 'TRANSFER',
        app_user_id: long('user-'),
        original_app_user_id: long('original-'),
        transferred_to: [long('to-')],
        environment: long('env-'),
      },
      'rc-odd-long-index',
      {},
    ],
    ['nothing but id and type', { id: 'rc-odd-bare', type: 'SOMETHING_NEW_FROM_REVENUECAT' }, 'rc-odd-bare', {}],
    [
      'a lower-case purchase_environment and no environment',
      { id: 'rc-odd-purchase-env', type: 'INITIAL_PURCHASE', purchase_environment: 'sandbox', aliases: null },
      'rc-odd-purchase-env',
      { livemode: false, environment: 'sandbox' },
    ],
    [
      'an environment RevenueCat does not document (treated as sandbox, as the policy always has)',
      { id: 'rc-odd-staging-env', type: 'INITIAL_PURCHASE', environment: 'Staging' },
      'rc-odd-staging-env',
      { livemode: false, environment: 'sandbox' },
    ],
  ])('stores a RevenueCat event with %s, indexing only what is usable', async (_case, event, key, indexed) => {
    const body = revenueCat(event);
    const response = await stack.postRevenueCat(body);
    expect({ status: response.status, body: await readJson(response) }).toEqual({
      status: 200,
      body: { status: 'accepted', eventId: key },
    });
    expect(await storedRow(stack, 'revenuecat', key)).toEqual({
      provider: 'revenuecat',
      provider_event_id: key,
      type: event.type,
      ...unindexed,
      ...indexed,
      raw_body: body,
      status: 'received',
      attempts: 0,
      last_error: null,
    });

    const again = await stack.postRevenueCat(body);
    expect({ status: again.status, body: await readJson(again) }).toEqual({
      status: 200,
      body: { status: 'duplicate', eventId: key },
    });
  });

  it('stores a RevenueCat event whose type holds control characters or is overlong, marking them visibly', async () => {
    const nulType = revenueCat({ id: 'rc-odd-nul-type', type: 'NON_RENEWING\u0000_PURCHASE' });
    const longType = revenueCat({ id: 'rc-odd-long-type', type: long('TYPE_') });
    expect((await stack.postRevenueCat(nulType)).status).toBe(200);
    expect((await stack.postRevenueCat(longType)).status).toBe(200);
    expect(await storedRow(stack, 'revenuecat', 'rc-odd-nul-type')).toMatchObject({
      type: 'NON_RENEWING\ufffd_PURCHASE',
      raw_body: nulType,
    });
    expect(await storedRow(stack, 'revenuecat', 'rc-odd-long-type')).toMatchObject({
      type: `${long('TYPE_').slice(0, 254)}…`,
      raw_body: longType,
    });
  });

  it.each([
    ['an event id that is an object', revenueCat({ id: { nested: 1 }, type: 'RENEWAL' })],
    ['an event id that is blank', revenueCat({ id: '   ', type: 'RENEWAL' })],
    ['an event without type', revenueCat({ id: 'rc-odd-no-type' })],
    ['a type that is a list', revenueCat({ id: 'rc-odd-list-type', type: ['RENEWAL'] })],
    ['a body that is a JSON list', '[1,2]'],
  ])('refuses %s with 400 invalid_event: the inbox cannot key it', async (_case, body) => {
    const before = await stack.db
      .selectFrom('inbox_events')
      .select(({ fn }) => fn.countAll<string>().as('n'))
      .executeTakeFirstOrThrow();
    const response = await stack.postRevenueCat(body);
    expect({ status: response.status, body: await readJson(response) }).toEqual({
      status: 400,
      body: { error: { code: 'invalid_event', message: expect.any(String) } },
    });
    const after = await stack.db
      .selectFrom('inbox_events')
      .select(({ fn }) => fn.countAll<string>().as('n'))
      .executeTakeFirstOrThrow();
    expect(after.n).toBe(before.n);
  });

  it('refuses a body holding a literal NUL byte with 400 invalid_encoding (it is not JSON, nor storable)', async () => {
    const body = Buffer.from(`{"api_version":"1.0","event":{"id":"rc-odd-raw-nul","type":"TEST","x":"a\u0000b"}}`);
    expect(body.includes(0)).toBe(true);
    const answer = await new Promise<{ status: number; body: string }>((resolve, reject) => {
      const req = request(
        {
          host: '127.0.0.1',
          port: stack.ingest.port,
          method: 'POST',
          path: '/webhooks/revenuecat',
          headers: { 'content-type': 'application/json', authorization: revenueCatAuth },
        },
        (res) => {
          let text = '';
          res.on('data', (chunk) => {
            text += chunk;
          });
          res.on('end', () => resolve({ status: res.statusCode ?? 0, body: text }));
        },
      );
      req.on('error', reject);
      req.end(body);
    });
    expect({ status: answer.status, body: JSON.parse(answer.body) }).toEqual({
      status: 400,
      body: { error: { code: 'invalid_encoding', message: 'request body contains a NUL byte' } },
    });
    expect(await stack.inboxRows('revenuecat', 'rc-odd-raw-nul')).toEqual([]);
  });

  const stripe = (fields: Record<string, unknown>) =>
    JSON.stringify({ object: 'event', created: 1_700_000_000, ...fields });

  it.each<[string, Record<string, unknown>, Record<string, unknown>]>([
    [
      'livemode as a string',
      {
        id: 'evt_odd_livemode',
        type: 'payment_intent.succeeded',
        livemode: 'yes',
        data: { object: { id: 'pi_odd_livemode', object: 'payment_intent', metadata: { user_id: 'odd-stripe-1' } } },
      },
      { user_id: 'odd-stripe-1', provider_payment_intent_id: 'pi_odd_livemode' },
    ],
    [
      'no data at all',
      { id: 'evt_odd_no_data', type: 'payment_intent.succeeded', livemode: false },
      { livemode: false, environment: 'sandbox' },
    ],
    [
      'data without object',
      { id: 'evt_odd_no_object', type: 'invoice.paid', livemode: true, data: { previous_attributes: {} } },
      { livemode: true, environment: 'production' },
    ],
    [
      'a NUL in metadata.user_id',
      {
        id: 'evt_odd_nul_user',
        type: 'payment_intent.succeeded',
        livemode: false,
        data: {
          object: {
            id: 'pi_odd_nul_user',
            object: 'payment_intent',
            customer: 'cus_odd_1',
            metadata: { user_id: 'odd\u0000stripe' },
          },
        },
      },
      {
        livemode: false,
        environment: 'sandbox',
        provider_payment_intent_id: 'pi_odd_nul_user',
        provider_customer_id: 'cus_odd_1',
      },
    ],
    [
      'a Connect account and ids of the wrong types',
      {
        id: 'evt_odd_types',
        type: 'invoice.paid',
        livemode: null,
        account: 'acct_odd_1',
        data: {
          object: {
            id: 42,
            object: 'invoice',
            customer: { id: 'cus_odd_expanded' },
            parent: { subscription_details: { subscription: ['sub_in_a_list'] } },
            subscription: 'sub_odd_legacy',
            payment_intent: long('pi_'),
          },
        },
      },
      { provider_customer_id: 'cus_odd_expanded', provider_subscription_id: 'sub_odd_legacy' },
    ],
  ])('stores a signed Stripe event with %s, indexing only what is usable', async (_case, event, indexed) => {
    const body = stripe(event);
    const response = await stack.postStripe(body, signStripe(body));
    expect({ status: response.status, body: await readJson(response) }).toEqual({
      status: 200,
      body: { status: 'accepted', eventId: event.id },
    });
    expect(await storedRow(stack, 'stripe', String(event.id))).toEqual({
      provider: 'stripe',
      provider_event_id: event.id,
      type: event.type,
      ...unindexed,
      ...indexed,
      raw_body: body,
      status: 'received',
      attempts: 0,
      last_error: null,
    });
  });

  it('refuses a signed Stripe event without an id with 400 invalid_event', async () => {
    const body = stripe({ type: 'payment_intent.succeeded', data: { object: {} } });
    const response = await stack.postStripe(body, signStripe(body));
    expect({ status: response.status, body: await readJson(response) }).toEqual({
      status: 400,
      body: { error: { code: 'invalid_event', message: 'id is missing or not a string' } },
    });
  });

  it('parks, at the first attempt, an event whose id the worker cannot put in a reference', async () => {
    stack.startWorker();
    try {
      const key = digestKey('rc-odd-nul\u0000id');
      const row = await eventually('the NUL-id event to be parked', async () => {
        const found = await storedRow(stack, 'revenuecat', key);
        return found?.status === 'failed' ? found : undefined;
      });
      expect(row).toMatchObject({
        attempts: 1,
        last_error:
          'InvalidEventError: not a RevenueCat webhook: event.id: contains control characters or unpaired surrogates',
      });
    } finally {
      await stack.stopWorkers();
    }
  });
});
