import { queueCatalog } from '@tally/billing-core';
import { testRedisUrl } from '@tally/billing-core/testing';
import { createLogger, createProducerQueue, createRedisConnection } from '@tally/platform';
import { createMailer } from '../../../apps/worker/src/email/create-mailer';
import { LocalSmtp } from '../../support/fakes/local-smtp';
import { adminKey, eventually, signStripe, startStackWithFakeStripe, type TestStack } from '../../support/stack';
import { stripeEventBody, stripeId, stripePackIntent } from '../../support/stripe-events';
import { stripeStateOf } from '../../support/stripe-state';
import { untilEmail } from '../../support/waits';

describe('Stripe confirmation emails', () => {
  let stack: TestStack;
  let smtp: LocalSmtp;

  beforeAll(async () => {
    smtp = await LocalSmtp.start();
    ({ stack } = await startStackWithFakeStripe());
  });
  afterEach(() => stack.stopWorkers());
  afterAll(async () => {
    await stack.stop();
    await smtp.stop();
  });

  const startEmailWorker = (maxAttempts: number) =>
    stack.startWorker({
      roles: ['inbox', 'relay', 'email'],
      relay: { intervalMs: 100, staleAfterMs: 60_000, processingStaleAfterMs: 60_000, batchSize: 100 },
      email: {
        mailer: createMailer({
          smtpUrl: smtp.url,
          from: 'Tally <billing@tally.test>',
          logger: createLogger({ name: 'test', level: 'silent' }),
        }),
        maxAttempts,
        backoff: { baseDelayMs: 100, maxDelayMs: 200 },
      },
    });

  it('sends one email per payment after an SMTP server refuses then accepts, and never touches the money', async () => {
    startEmailWorker(10);
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
    const email = await untilEmail(stack.db, userId, 'sent', 'the email to be sent');
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

  it('a parked email retried from the queue dashboard is sent exactly once, and the money is untouched', async () => {
    startEmailWorker(2);
    smtp.refusals = 1_000;
    const userId = stripeId('user');
    const customer = stripeId('cus');
    const paymentIntentId = stripeId('pi');
    const address = `${userId}@example.com`;
    await stack.deliverStripe(
      stripeEventBody(
        'payment_intent.succeeded',
        stripePackIntent({ id: paymentIntentId, userId, customer, email: address }),
      ),
    );
    const parked = await untilEmail(stack.db, userId, 'failed', 'the email to be parked after its attempts');
    expect(parked).toMatchObject({ attempts: 2, to_address: address, sent_at: null });
    expect(parked.last_error).toContain('mailbox temporarily unavailable');
    const before = await stripeStateOf(stack.db, userId);
    expect(before.ledger).toHaveLength(1);
    expect(before.balance).toBe(100);

    const connection = createRedisConnection(testRedisUrl(), 'producer');
    const emailQueue = createProducerQueue(connection, stack.prefix, queueCatalog.email);
    try {
      const jobId = queueCatalog.email.jobId({ emailId: parked.id });
      await eventually('the email job to be failed in BullMQ', async () => {
        const job = await emailQueue.getJob(jobId);
        return job && (await job.getState()) === 'failed';
      });
      smtp.refusals = 0;
      const deliveredBefore = smtp.received.length;

      // What the dashboard's retry button sends (Bull Board's retry route), with the admin key.
      const retry = await fetch(`http://127.0.0.1:${stack.api.port}/admin/queues/api/queues/email/${jobId}/retry`, {
        method: 'PUT',
        headers: { authorization: `Bearer ${adminKey}` },
      });
      expect(retry.status).toBe(204);

      const sent = await eventually('the retried email to be sent', async () => {
        const row = await stack.db
          .selectFrom('email_outbox')
          .selectAll()
          .where('id', '=', parked.id)
          .executeTakeFirst();
        return row?.status === 'sent' ? row : undefined;
      });
      // A fresh start: attempts counted again from zero, the old error cleared.
      expect(sent).toMatchObject({ attempts: 1, last_error: null, next_attempt_at: null });
      const job = await eventually('the retried job to complete', async () => {
        const found = await emailQueue.getJob(jobId);
        return found && (await found.getState()) === 'completed' ? found : undefined;
      });
      expect(job.returnvalue).toEqual({ status: 'sent' });
      const delivered = smtp.received.slice(deliveredBefore);
      expect(delivered.map((mail) => mail.to)).toEqual([[address]]);
      expect(smtp.received.filter((mail) => mail.to.includes(address))).toHaveLength(1);

      // Retrying the completed job again is refused and sends nothing.
      const again = await fetch(`http://127.0.0.1:${stack.api.port}/admin/queues/api/queues/email/${jobId}/retry`, {
        method: 'PUT',
        headers: { authorization: `Bearer ${adminKey}` },
      });
      expect(again.status).toBe(400);
      expect(smtp.received.filter((mail) => mail.to.includes(address))).toHaveLength(1);
    } finally {
      await emailQueue.close();
      connection.disconnect();
    }

    // The parked sends and the retry changed nothing but the email row.
    expect(await stripeStateOf(stack.db, userId)).toEqual({
      ...before,
      emails: [{ provider_payment_id: paymentIntentId, to_address: address, status: 'sent' }],
    });
  });
});
