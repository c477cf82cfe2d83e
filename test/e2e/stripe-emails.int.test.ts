import { createStripeApi } from '@tally/billing-core';
import { createLogger } from '@tally/platform';
import { createMailer } from '../../apps/worker/src/email/create-mailer';
import { FakeStripe } from '../support/fakes/fake-stripe';
import { LocalSmtp } from '../support/fakes/local-smtp';
import { eventually, signStripe, TestStack } from '../support/stack';
import { stripeEventBody, stripeId, stripePackIntent } from '../support/stripe-events';
import { stripeStateOf } from '../support/stripe-state';

describe('Stripe confirmation emails', () => {
  let stack: TestStack;
  let fake: FakeStripe;
  let smtp: LocalSmtp;

  beforeAll(async () => {
    fake = await FakeStripe.start();
    smtp = await LocalSmtp.start();
    stack = await TestStack.start({
      ports: { stripe: createStripeApi({ secretKey: 'sk_test_fake', apiBaseUrl: fake.baseUrl, timeoutMs: 5_000 }) },
    });
  });
  afterAll(async () => {
    await stack.stop();
    await smtp.stop();
    await fake.stop();
  });

  it('sends one email per payment after an SMTP server refuses then accepts, and never touches the money', async () => {
    stack.startWorker({
      roles: ['inbox', 'relay', 'email'],
      relay: { intervalMs: 100, staleAfterMs: 60_000, processingStaleAfterMs: 60_000, batchSize: 100 },
      email: {
        mailer: createMailer({
          smtpUrl: smtp.url,
          from: 'Tally <billing@tally.test>',
          logger: createLogger({ name: 'test', level: 'silent' }),
        }),
        maxAttempts: 10,
        backoff: { baseDelayMs: 100, maxDelayMs: 200 },
      },
    });
    smtp.refusals = 2;
    const userId = stripeId('user');
    const customer = stripeId('cus');
    const paymentIntentId = stripeId('pi');
    // The same payment under two event ids: still one email.
    for (let i = 0; i < 2; i += 1) {
      const body = stripeEventBody(
        'payment_intent.succeeded',
        stripePackIntent({ id: paymentIntentId, userId, customer, email: 'buyer@example.com' }),
      );
      expect((await stack.postStripe(body, signStripe(body))).status).toBe(200);
    }
    const email = await eventually('the email to be sent', async () => {
      const row = await stack.db
        .selectFrom('email_outbox')
        .selectAll()
        .where('user_id', '=', userId)
        .executeTakeFirst();
      return row?.status === 'sent' ? row : undefined;
    });
    expect(email).toMatchObject({ to_address: 'buyer@example.com', attempts: 3, subject: 'Your token purchase' });
    expect(email.last_error).toBeNull();
    expect(smtp.refused).toBe(2);
    const delivered = smtp.received.filter((mail) => mail.to.includes('buyer@example.com'));
    expect(delivered).toHaveLength(1);
    expect(delivered[0]?.raw).toContain('Subject: Your token purchase');

    // The failed sends changed nothing but the email row: one payment, one credit.
    expect(await stripeStateOf(stack.db, userId)).toEqual({
      balance: 100,
      ledger: [
        {
          reference: `stripe:payment:${paymentIntentId}`,
          amount: 100,
          balance_before: 0,
          balance_after: 100,
          reason: 'token_pack_purchase',
        },
      ],
      payments: [
        expect.objectContaining({ provider_payment_id: paymentIntentId, status: 'succeeded', tokens_granted: 100 }),
      ],
      subscriptions: [],
      emails: [{ provider_payment_id: paymentIntentId, to_address: 'buyer@example.com', status: 'sent' }],
      customers: [customer],
      installments: [],
    });
  });
});
