import { parseRevenueCatWebhook, parseRevenueCatWebhookWithSchema } from './revenuecat/revenuecat-event';
import { parseStripeEvent, parseStripeEventWithSchema } from './stripe/stripe-event';

/** What a parse came to: its value, or the message it threw. */
function outcome(parse: (body: string) => unknown, body: string): unknown {
  try {
    return { value: parse(body) };
  } catch (error) {
    return { error: String(error) };
  }
}

/** Every field of `base` set to each of `values` and removed, one at a time, plus `base` itself. */
function variants(base: Record<string, unknown>, values: readonly unknown[]): Record<string, unknown>[] {
  const out: Record<string, unknown>[] = [base];
  for (const key of Object.keys(base)) {
    const { [key]: _removed, ...without } = base;
    out.push(without);
    for (const value of values) out.push({ ...base, [key]: value });
  }
  return out;
}

const odd = [
  null,
  '',
  ' padded ',
  'x'.repeat(101),
  'x'.repeat(256),
  'nul\u0000',
  42,
  0,
  true,
  [],
  ['a', null, 'b'],
  ['a', 'b'],
  {},
  { id: 'pi_1', object: 'payment_intent' },
  '1700000000000',
];

describe('the providers’ fast parse of a well-formed body', () => {
  it('RevenueCat: returns what the schema returns, or throws what it throws, for every field odd in turn', () => {
    const event = {
      id: 'rcevt_1',
      type: 'NON_RENEWING_PURCHASE',
      app_id: 'app-bench',
      app_user_id: 'user-1',
      original_app_user_id: 'user-1',
      aliases: ['user-1', '$RCAnonymousID:abc'],
      product_id: 'tokens.100',
      environment: 'PRODUCTION',
      purchase_environment: 'PRODUCTION',
      transferred_from: ['a'],
      transferred_to: ['b'],
      store: 'APP_STORE',
      transaction_id: 'tx_1',
      event_timestamp_ms: 1_700_000_000_000,
      price: 4.99,
    };
    const bodies = [
      ...variants(event, odd).map((variant) => ({ api_version: '1.0', event: variant })),
      { event },
      { api_version: 2, event },
      { api_version: null, event },
      { api_version: '1.0', event: null },
      { api_version: '1.0', event: [event] },
      { api_version: '1.0' },
    ].map((body) => JSON.stringify(body));
    bodies.push('[]', 'null', '{not json');
    for (const body of bodies) {
      expect([body, outcome(parseRevenueCatWebhook, body)]).toEqual([
        body,
        outcome(parseRevenueCatWebhookWithSchema, body),
      ]);
    }
  });

  it('Stripe: returns what the schema returns, or throws what it throws, for every field odd in turn', () => {
    const object = {
      id: 'pi_1',
      object: 'payment_intent',
      amount_received: 499,
      currency: 'usd',
      metadata: { pack_id: 'tokens_100', user_id: 'user-1' },
    };
    const event = {
      id: 'evt_1',
      object: 'event',
      type: 'payment_intent.succeeded',
      livemode: true,
      account: 'acct_1',
      created: 1_700_000_000,
      api_version: '2024-06-20',
      data: { object },
    };
    const bodies = [
      ...variants(event, odd),
      ...variants(object, odd).map((variant) => ({ ...event, data: { object: variant } })),
      { ...event, data: { object, previous_attributes: { status: 'x' } } },
      { ...event, data: {} },
      { ...event, data: { object: null } },
      { ...event, data: { object: [object] } },
      { ...event, id: 12345 },
    ].map((body) => JSON.stringify(body));
    bodies.push('[]', '{not json');
    for (const body of bodies) {
      expect([body, outcome(parseStripeEvent, body)]).toEqual([body, outcome(parseStripeEventWithSchema, body)]);
    }
  });
});
