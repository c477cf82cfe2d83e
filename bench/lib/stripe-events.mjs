// Signed Stripe payment_intent.succeeded events for a catalog token pack, 2–4 KB each (the size
// of a real event with its expanded payment intent), signed with stripe-node's own test header
// generator and the configured webhook secret.
import { randomBytes } from 'node:crypto';
import { Stripe } from './workspace.mjs';

const filler = randomBytes(3000).toString('base64url');

/** One event body. `size` (bytes, 2048–4096) is reached with realistic-looking padding fields. */
export function stripeTokenPackEvent({ eventId, paymentIntentId, userId, size = 3072 }) {
  const base = {
    id: eventId,
    object: 'event',
    api_version: '2025-03-31.basil',
    created: Math.floor(Date.now() / 1000),
    livemode: false,
    pending_webhooks: 1,
    request: { id: `req_${eventId.slice(-14)}`, idempotency_key: `ik_${eventId.slice(-20)}` },
    type: 'payment_intent.succeeded',
    data: {
      object: {
        id: paymentIntentId,
        object: 'payment_intent',
        amount: 499,
        amount_capturable: 0,
        amount_received: 499,
        capture_method: 'automatic_async',
        confirmation_method: 'automatic',
        created: Math.floor(Date.now() / 1000) - 5,
        currency: 'usd',
        customer: `cus_${userId.replace(/[^a-z0-9]/gi, '').slice(-14)}`,
        description: 'Tally token pack (100 tokens)',
        latest_charge: `ch_${paymentIntentId.slice(3)}`,
        livemode: false,
        metadata: { user_id: userId, pack_id: 'tokens_100' },
        payment_method: `pm_${paymentIntentId.slice(3)}`,
        payment_method_configuration_details: { id: 'pmc_1Bench', parent: null },
        payment_method_options: {
          card: { installments: null, mandate_options: null, network: null, request_three_d_secure: 'automatic' },
          link: { persistent_token: null },
        },
        payment_method_types: ['card', 'link'],
        receipt_email: 'buyer@example.com',
        shipping: null,
        status: 'succeeded',
        automatic_payment_methods: { allow_redirects: 'always', enabled: true },
      },
    },
  };
  const json = JSON.stringify(base);
  const pad = Math.max(0, size - json.length - 19);
  base.data.object.metadata.bench_padding = filler.slice(0, Math.min(pad, filler.length));
  return JSON.stringify(base);
}

export function signStripe(payload, secret, timestamp = Math.floor(Date.now() / 1000)) {
  return Stripe.webhooks.generateTestHeaderString({ payload, secret, timestamp });
}

/**
 * `count` distinct signed events (ids carry `tag`), users spread over `users` (numbered from
 * `userOffset`); sizes vary deterministically between 2 and 4 KB. Each entry is { body,
 * signature, eventId, userId }.
 */
export function signedEvents({ tag, count, users, secret, userPrefix = 'bench-user', userOffset = 0 }) {
  const timestamp = Math.floor(Date.now() / 1000);
  const out = new Array(count);
  for (let i = 0; i < count; i += 1) {
    const eventId = `evt_${tag}_${i}`;
    const userId = `${userPrefix}-${userOffset + (i % users)}`;
    const body = stripeTokenPackEvent({
      eventId,
      paymentIntentId: `pi_${tag}_${i}`,
      userId,
      size: 2048 + ((i * 7919) % 2048),
    });
    out[i] = { body, signature: signStripe(body, secret, timestamp), eventId, userId };
  }
  return out;
}
