import { createAppWebhookSender, deliverAppWebhookMessage, toWebhookId } from '@tally/billing-core';
import { signal } from '@tally/billing-core/testing';
import { sql } from 'kysely';
import { AppWebhookReceiver, newWebhookSecret } from '../../support/fakes/app-webhook-receiver';
import { eventually, TestStack } from '../../support/stack';

/**
 * An attempt that outlives the processing window is superseded: another worker claims the
 * message again (attempts + 1) and sends it. Whatever the old attempt's answer, it must not
 * record its outcome over the newer attempt's: only the attempt that holds the claim does.
 */
describe('outbound app webhooks: a superseded attempt records nothing', () => {
  let stack: TestStack;
  let receiver: AppWebhookReceiver;
  const secrets = [newWebhookSecret()];

  beforeAll(async () => {
    receiver = await AppWebhookReceiver.start(secrets);
    stack = await TestStack.start();
  });
  afterAll(async () => {
    await stack?.stop();
    await receiver?.stop();
  });

  it("an old attempt's late failure neither puts the message back to pending nor hides the newer attempt's delivery", async () => {
    const userId = `awh-superseded-${Date.now().toString(36)}`;
    await stack.postPlainEntry({ userId, reference: `test:awh:${userId}`, amount: 9, reason: 'test_grant' });
    const { id: messageId } = await stack.db
      .selectFrom('app_webhook_messages')
      .select('id')
      .where('user_id', '=', userId)
      .executeTakeFirstOrThrow();
    // Each attempt is answered when the test opens its gate: attempt 1 (500) only once attempt 2
    // has claimed the message again and reached the app, attempt 2 (204) after attempt 1 has
    // recorded whatever it records.
    const answerFirst = signal();
    const answerSecond = signal();
    receiver.answers.push(
      { kind: 'status', status: 500, after: answerFirst.promise },
      { kind: 'status', status: 204, after: answerSecond.promise },
    );
    const deps = {
      db: stack.db,
      sender: createAppWebhookSender({ url: receiver.url, secrets, timeoutMs: 5_000 }),
      retryScheduleMs: [60_000, 60_000],
      processingStaleAfterMs: 300,
    };
    const first = deliverAppWebhookMessage(deps, Number(messageId));
    await eventually('attempt 1 to reach the app', async () => receiver.deliveries.length === 1);
    // Attempt 1 has been processing past the stale window, by the database's clock.
    await eventually('attempt 1 to go stale', async () => {
      const stale = await sql<{ stale: boolean }>`
        SELECT updated_at < now() - interval '300 milliseconds' AS stale
          FROM app_webhook_messages WHERE id = ${messageId}`.execute(stack.db);
      return stale.rows[0]?.stale === true;
    });
    const second = deliverAppWebhookMessage(deps, Number(messageId));
    await eventually('attempt 2 to reach the app', async () => receiver.deliveries.length === 2);
    answerFirst.resolve();

    // The old attempt's failure is not its to record: a newer claim holds the message.
    expect(await first).toEqual({ kind: 'not-claimed', messageId: Number(messageId) });
    const whileSecondSends = await stack.db
      .selectFrom('app_webhook_messages')
      .selectAll()
      .where('id', '=', messageId)
      .executeTakeFirstOrThrow();
    expect(whileSecondSends).toMatchObject({ status: 'processing', attempts: 2, last_status_code: null });
    answerSecond.resolve();

    expect(await second).toMatchObject({ kind: 'delivered', statusCode: 204 });
    const final = await stack.db
      .selectFrom('app_webhook_messages')
      .selectAll()
      .where('id', '=', messageId)
      .executeTakeFirstOrThrow();
    expect(final).toMatchObject({ status: 'delivered', attempts: 2, last_status_code: 204, next_attempt_at: null });
    const webhookId = toWebhookId(final.message_id);
    expect(receiver.deliveries.map((delivery) => [delivery.webhookId, delivery.answeredWith])).toEqual([
      [webhookId, 500],
      [webhookId, 204],
    ]);
  });
});
