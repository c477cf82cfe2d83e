import { createStripeApi } from '@tally/billing-core';
import { createLogger } from '@tally/platform';
import { sql } from 'kysely';
import { createMailer } from '../../apps/worker/src/email/create-mailer';
import { FakeStripe } from '../support/fakes/fake-stripe';
import { eventually, signStripe, TestStack } from '../support/stack';
import { stripeEventBody, stripeId, stripePackIntent } from '../support/stripe-events';

/**
 * A confirmation email whose worker died mid-send (row left `processing`) is sent once the relay
 * hands it back after RELAY_PROCESSING_STALE_AFTER_MS, not after a fixed five minutes (found by
 * the chaos suite: under kill -9 an email stayed `processing` past every settle deadline).
 */
describe('email outbox recovery', () => {
  let stack: TestStack;
  let fake: FakeStripe;

  beforeAll(async () => {
    fake = await FakeStripe.start();
    stack = await TestStack.start({
      ports: { stripe: createStripeApi({ secretKey: 'sk_test_fake', apiBaseUrl: fake.baseUrl, timeoutMs: 5_000 }) },
    });
  });
  afterAll(async () => {
    await stack.stop();
    await fake.stop();
  });

  it("sends an email left processing by a dead worker once the relay's processing window has passed", async () => {
    // The payment is recorded by a worker without the email role: its email row waits, pending.
    stack.startWorker({ roles: ['inbox'] });
    const userId = stripeId('user');
    const body = stripeEventBody(
      'payment_intent.succeeded',
      stripePackIntent({ id: stripeId('pi'), userId, customer: stripeId('cus'), email: 'buyer@example.com' }),
    );
    expect((await stack.postStripe(body, signStripe(body))).status).toBe(200);
    const pending = await eventually('the email row', async () =>
      stack.db.selectFrom('email_outbox').selectAll().where('user_id', '=', userId).executeTakeFirst(),
    );
    // A worker claimed it 3 s ago and died before sending (the claim's own UPDATE, back-dated).
    await sql`UPDATE email_outbox SET status = 'processing', attempts = 1,
                     updated_at = now() - interval '3 seconds', enqueued_at = now() - interval '3 seconds'
               WHERE id = ${pending.id}`.execute(stack.db);

    stack.startWorker({
      roles: ['relay', 'email'],
      relay: { intervalMs: 100, staleAfterMs: 60_000, processingStaleAfterMs: 1_000, batchSize: 100 },
      email: {
        mailer: createMailer({
          smtpUrl: undefined,
          from: 'Tally <billing@tally.test>',
          logger: createLogger({ name: 'test', level: 'silent' }),
        }),
        maxAttempts: 10,
        backoff: { baseDelayMs: 100, maxDelayMs: 200 },
      },
    });
    const sent = await eventually(
      'the email to be sent',
      async () => {
        const row = await stack.db
          .selectFrom('email_outbox')
          .selectAll()
          .where('id', '=', pending.id)
          .executeTakeFirst();
        return row?.status === 'sent' ? row : undefined;
      },
      15_000,
    );
    expect(sent).toMatchObject({ status: 'sent', attempts: 2, to_address: 'buyer@example.com', last_error: null });
  });
});
