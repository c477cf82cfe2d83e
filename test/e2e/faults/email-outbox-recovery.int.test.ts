import type { Mailer } from '@tally/billing-core';
import { testRedisUrl } from '@tally/billing-core/testing';
import { createLogger } from '@tally/platform';
import { Redis } from 'ioredis';
import { sql } from 'kysely';
import { createMailer } from '../../../apps/worker/src/email/create-mailer';
import { createEmailWorker } from '../../../apps/worker/src/processors/email-processor';
import {
  defaultWorkerSettings,
  eventually,
  signStripe,
  startStackWithFakeStripe,
  type TestStack,
} from '../../support/stack';
import { stripeEventBody, stripeId, stripePackIntent } from '../../support/stripe-events';

/**
 * A confirmation email whose worker died mid-send (row left `processing`) is sent once the relay
 * hands it back after RELAY_PROCESSING_STALE_AFTER_MS, not after a fixed five minutes (found by
 * the chaos suite: under kill -9 an email stayed `processing` past every settle deadline).
 */
/** A test stack with the fake Stripe as its Stripe port, started and stopped around the describe. */
function stackWithFakeStripe(): { stack: () => TestStack } {
  let stack: TestStack | undefined;
  beforeAll(async () => {
    ({ stack } = await startStackWithFakeStripe());
  });
  afterAll(() => stack?.stop());
  return {
    stack: () => {
      if (!stack) throw new Error('the stack is not started');
      return stack;
    },
  };
}

/** The mailer of a worker without SMTP_URL: it logs (silently here) instead of sending. */
const logOnlyMailer = () =>
  createMailer({
    smtpUrl: undefined,
    from: 'Tally <billing@tally.test>',
    logger: createLogger({ name: 'test', level: 'silent' }),
  });

/** A signed token-pack payment for a new user; answers its confirmation email row once recorded. */
async function payForPack(stack: TestStack, email: string) {
  const userId = stripeId('user');
  const body = stripeEventBody(
    'payment_intent.succeeded',
    stripePackIntent({ id: stripeId('pi'), userId, customer: stripeId('cus'), email }),
  );
  expect((await stack.postStripe(body, signStripe(body))).status).toBe(200);
  return eventually('the email row', async () =>
    stack.db.selectFrom('email_outbox').selectAll().where('user_id', '=', userId).executeTakeFirst(),
  );
}

/** Waits until the email row is sent and answers it. */
function emailSent(stack: TestStack, id: number, what: string, timeoutMs: number) {
  return eventually(
    what,
    async () => {
      const row = await stack.db.selectFrom('email_outbox').selectAll().where('id', '=', id).executeTakeFirst();
      return row?.status === 'sent' ? row : undefined;
    },
    timeoutMs,
  );
}

describe('email outbox recovery', () => {
  const { stack } = stackWithFakeStripe();

  it("sends an email left processing by a dead worker once the relay's processing window has passed", async () => {
    // The payment is recorded by a worker without the email role: its email row waits, pending.
    stack().startWorker({ roles: ['inbox'] });
    const pending = await payForPack(stack(), 'buyer@example.com');
    // A worker claimed it 3 s ago and died before sending (the claim's own UPDATE, back-dated).
    await sql`UPDATE email_outbox SET status = 'processing', attempts = 1,
                     updated_at = now() - interval '3 seconds', enqueued_at = now() - interval '3 seconds'
               WHERE id = ${pending.id}`.execute(stack().db);

    stack().startWorker({
      roles: ['relay', 'email'],
      relay: { intervalMs: 100, staleAfterMs: 60_000, processingStaleAfterMs: 1_000, batchSize: 100 },
      email: {
        mailer: logOnlyMailer(),
        maxAttempts: 10,
        backoff: { baseDelayMs: 100, maxDelayMs: 200 },
      },
    });
    const sent = await emailSent(stack(), pending.id, 'the email to be sent', 15_000);
    expect(sent).toMatchObject({ status: 'sent', attempts: 2, to_address: 'buyer@example.com', last_error: null });
  });
});

/**
 * BullMQ's stalled check is what hands back the job of an email worker that died mid-send (the
 * relay skips a row whose job still exists). Its own stack: no other email worker may take the job.
 */
describe("email outbox: a dead email worker's job", () => {
  const { stack } = stackWithFakeStripe();

  it("a job whose email worker died mid-send is taken back after WORKER_LOCK_DURATION_MS, not BullMQ's default minute", async () => {
    // The payment is recorded by a worker without the email role; the relay hands its email row to
    // the email queue, where the job waits.
    const recorder = stack().startWorker({ roles: ['inbox', 'relay'] });
    const pending = await payForPack(stack(), 'dies@example.com');
    await recorder.loops.relay?.runOnce();

    // An email worker (lock 1 s, as WORKER_LOCK_DURATION_MS=1000 gives every consumer) claims the
    // row and hangs in the SMTP call; then it dies: force-closed, its job left active in Redis
    // with a lock nobody renews.
    let sending!: () => void;
    const sendStarted = new Promise<void>((resolve) => {
      sending = resolve;
    });
    const hangingMailer: Mailer = {
      send: () => {
        sending();
        return new Promise<void>(() => undefined);
      },
    };
    const connection = new Redis(testRedisUrl(), { maxRetriesPerRequest: null });
    const dying = createEmailWorker(
      {
        db: stack().db,
        mailer: hangingMailer,
        logger: createLogger({ name: 'test', level: 'silent' }),
        maxAttempts: defaultWorkerSettings.email.maxAttempts,
        backoff: defaultWorkerSettings.email.backoff,
        processingStaleAfterMs: 1_000,
      },
      { connection, prefix: stack().prefix, concurrency: 1, lockDurationMs: 1_000 },
    );
    await sendStarted;
    await dying.close(true);
    connection.disconnect();
    expect(
      await stack()
        .db.selectFrom('email_outbox')
        .select(['status', 'attempts'])
        .where('id', '=', pending.id)
        .executeTakeFirst(),
    ).toEqual({ status: 'processing', attempts: 1 });

    // A live email worker with the same lock setting and no relay: only BullMQ's stalled check can
    // hand the job back. With the lock setting left out of the email consumer it would keep
    // BullMQ's 30 s stalled interval and miss this deadline.
    stack().startWorker({
      roles: ['email'],
      lockDurationMs: 1_000,
      relay: { intervalMs: 60_000, staleAfterMs: 60_000, processingStaleAfterMs: 1_000, batchSize: 100 },
      email: {
        mailer: logOnlyMailer(),
        maxAttempts: 10,
        backoff: { baseDelayMs: 100, maxDelayMs: 200 },
      },
    });
    const sent = await emailSent(stack(), pending.id, 'the email to be sent by the live worker', 12_000);
    expect(sent).toMatchObject({ status: 'sent', attempts: 2, to_address: 'dies@example.com', last_error: null });
  });
});
