import { createAppWebhookSender, deliverAppWebhookMessage, postLedgerEntry, toWebhookId } from '@tally/billing-core';
import { AppWebhookReceiver, newWebhookSecret } from '../support/fakes/app-webhook-receiver';
import { TestStack } from '../support/stack';

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

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
    await stack.transaction((trx) =>
      postLedgerEntry(trx, { userId, reference: `test:awh:${userId}`, amount: 9, reason: 'test_grant' }),
    );
    const { id: messageId } = await stack.db
      .selectFrom('app_webhook_messages')
      .select('id')
      .where('user_id', '=', userId)
      .executeTakeFirstOrThrow();
    // Attempt 1 is answered 500 after 800 ms; attempt 2 (claimed 400 ms in, when attempt 1 has
    // been processing past the 300 ms window) is answered 204 after 1,200 ms, i.e. after
    // attempt 1 has recorded whatever it records.
    receiver.answers.push(
      { kind: 'status', status: 500, delayMs: 800 },
      { kind: 'status', status: 204, delayMs: 1_200 },
    );
    const deps = {
      db: stack.db,
      sender: createAppWebhookSender({ url: receiver.url, secrets, timeoutMs: 5_000 }),
      retryScheduleMs: [60_000, 60_000],
      processingStaleAfterMs: 300,
    };
    const first = deliverAppWebhookMessage(deps, Number(messageId));
    await sleep(400);
    const second = deliverAppWebhookMessage(deps, Number(messageId));

    // The old attempt's failure is not its to record: a newer claim holds the message.
    expect(await first).toEqual({ kind: 'not-claimed', messageId: Number(messageId) });
    const whileSecondSends = await stack.db
      .selectFrom('app_webhook_messages')
      .selectAll()
      .where('id', '=', messageId)
      .executeTakeFirstOrThrow();
    expect(whileSecondSends).toMatchObject({ status: 'processing', attempts: 2, last_status_code: null });

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
