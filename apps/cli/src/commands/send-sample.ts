import { randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';
import type { Provider } from '@tally/billing-core';
import { csvList, parseEnv, port } from '@tally/platform';
import Stripe from 'stripe';
import { z } from 'zod';
import { describeConnectionFailure, ServerUnreachableError } from './unreachable-server';

export const sampleEnvSchema = z.object({
  INGEST_PORT: port(3000),
  STRIPE_WEBHOOK_SECRETS: csvList,
  REVENUECAT_WEBHOOK_AUTH: csvList,
});

export interface SendSampleOptions {
  user: string;
  eventId?: string;
  product: string;
  file?: string;
  url?: string;
}

function revenueCatSample(options: SendSampleOptions): string {
  const now = Date.now();
  return JSON.stringify({
    api_version: '1.0',
    event: {
      id: options.eventId ?? randomUUID(),
      type: 'NON_RENEWING_PURCHASE',
      app_user_id: options.user,
      original_app_user_id: options.user,
      aliases: [options.user],
      product_id: options.product,
      period_type: 'NORMAL',
      purchased_at_ms: now,
      expiration_at_ms: null,
      event_timestamp_ms: now,
      environment: 'SANDBOX',
      store: 'APP_STORE',
      transaction_id: String(now),
      price: 4.99,
      currency: 'USD',
    },
  });
}

function stripeSample(options: SendSampleOptions): string {
  const intentId = `pi_${randomUUID().replaceAll('-', '').slice(0, 24)}`;
  return JSON.stringify({
    id: options.eventId ?? `evt_${randomUUID().replaceAll('-', '').slice(0, 24)}`,
    object: 'event',
    type: 'payment_intent.succeeded',
    livemode: false,
    created: Math.floor(Date.now() / 1000),
    api_version: '2025-03-31.basil',
    data: {
      object: {
        id: intentId,
        object: 'payment_intent',
        amount: 499,
        amount_received: 499,
        currency: 'usd',
        status: 'succeeded',
        metadata: { user_id: options.user, pack_id: options.product },
      },
    },
  });
}

/**
 * `tally send-sample <provider>`: builds (or reads) a webhook body, signs it the way the provider
 * does with the configured secret, POSTs it to ingest and prints the answer.
 */
export async function runSendSample(provider: Provider, options: SendSampleOptions): Promise<void> {
  const env = parseEnv(sampleEnvSchema, process.env);
  const base = options.url ?? `http://127.0.0.1:${env.INGEST_PORT}`;
  const body = options.file
    ? readFileSync(options.file, 'utf8')
    : provider === 'revenuecat'
      ? revenueCatSample(options)
      : stripeSample(options);
  const headers: Record<string, string> = { 'content-type': 'application/json' };
  if (provider === 'revenuecat') {
    const auth = env.REVENUECAT_WEBHOOK_AUTH[0];
    if (!auth) throw new Error('REVENUECAT_WEBHOOK_AUTH is empty: nothing to authorize the sample with');
    headers.authorization = auth;
  } else {
    const secret = env.STRIPE_WEBHOOK_SECRETS[0];
    if (!secret) throw new Error('STRIPE_WEBHOOK_SECRETS is empty: nothing to sign the sample with');
    headers['stripe-signature'] = Stripe.webhooks.generateTestHeaderString({ payload: body, secret });
  }
  let response: Response;
  try {
    response = await fetch(`${base}/webhooks/${provider}`, { method: 'POST', headers, body });
  } catch (error) {
    // Node's fetch says only "fetch failed"; describeConnectionFailure finds ECONNREFUSED & co. in its cause.
    throw new ServerUnreachableError(
      'ingest_unreachable',
      'ingest',
      base,
      describeConnectionFailure(error),
      'is the stack running? npm start',
    );
  }
  process.stdout.write(`${response.status} ${await response.text()}\n`);
  if (!response.ok) process.exitCode = 1;
}
