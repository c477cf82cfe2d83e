import {
  type AppWebhookMessageRow,
  createAppWebhookSender,
  expireDueLots,
  grantTokens,
  inUnitOfWork,
  plainLots,
  postLedgerEntry,
  toAppWebhookBody,
  toWebhookId,
} from '@tally/billing-core';
import { createTestDatabase, type TestDatabase, testOutbox } from '@tally/billing-core/testing';
import { sql } from 'kysely';
import { type AppWebhookViolation, checkAppWebhookInvariants } from '../../support/app-webhook-invariants';
import { AppWebhookReceiver, newWebhookSecret } from '../../support/fakes/app-webhook-receiver';
import { RunOnceAfter } from '../../support/run-once-after';

/**
 * The app webhook invariants the chaos suite checks after every scenario
 * (test/support/app-webhook-invariants.ts) hold for messages delivered as Tally delivers them, and
 * each one reports its loss: a user's messages delivered out of order, a message sent for a change
 * that rolled back, a ledger entry without its message, a message marked delivered that the app
 * never accepted, one left pending. Messages are delivered here by hand (the real sender, signed
 * with both secrets, to a real receiver verifying each), so each test breaks exactly one guarantee.
 */
describe('app webhook invariants (what the chaos suite checks after every scenario)', () => {
  let database: TestDatabase;
  let receiver: AppWebhookReceiver;
  const secrets = [newWebhookSecret(), newWebhookSecret()];
  let n = 0;

  beforeEach(async () => {
    database = await createTestDatabase();
    receiver = await AppWebhookReceiver.start(secrets);
  });
  afterEach(async () => {
    await receiver?.stop();
    await database?.drop();
  });

  const db = () => database.db;
  const grant = (userId: string, amount: number) => {
    n += 1;
    const reference = `test:inv:${userId}:${n}`;
    return inUnitOfWork({ db: db(), outbox: testOutbox }, (uow) =>
      postLedgerEntry(uow, { userId, reference, amount, reason: 'test_grant', lots: plainLots(amount) }),
    );
  };
  const messagesOf = (userId: string) =>
    db().selectFrom('app_webhook_messages').selectAll().where('user_id', '=', userId).orderBy('id').execute();
  /** Sends one message as the worker does, and records the outcome as the worker does. */
  const deliver = async (message: AppWebhookMessageRow, record = true) => {
    const sender = createAppWebhookSender({ url: receiver.url, secrets, timeoutMs: 2_000 });
    const attempt = await sender.send({ webhookId: toWebhookId(message.message_id), body: toAppWebhookBody(message) });
    expect(attempt.kind).toBe('delivered');
    if (record) {
      await sql`UPDATE app_webhook_messages SET status = 'delivered', attempts = attempts + 1, delivered_at = now()
                 WHERE id = ${message.id}`.execute(db());
    }
  };
  const check = async () => (await checkAppWebhookInvariants(db(), receiver)).violations;
  const invariants = (violations: AppWebhookViolation[]) => [...new Set(violations.map((v) => v.invariant))];

  it('hold when every message is delivered once, in order, as written (a redelivery allowed)', async () => {
    await grant('inv-a', 10);
    await grant('inv-a', -5);
    await grant('inv-b', 7);
    for (const message of [...(await messagesOf('inv-a')), ...(await messagesOf('inv-b'))]) await deliver(message);
    // At least once: the first message again, after the second (the same webhook-id).
    const [first] = await messagesOf('inv-a');
    if (first) await deliver(first, false);
    const { violations, stats } = await checkAppWebhookInvariants(db(), receiver);
    expect(violations).toEqual([]);
    expect(stats).toMatchObject({ messages: 3, delivered: 3, failed: 0, received: 4, acceptedTwice: 1 });
  });

  it("hold for a lot's expiry announced as wallet.credits_expired, and report it announced as a debit", async () => {
    // A grant whose lot expired a second ago, then the sweeper's expiry of it (reason credits_expired).
    await inUnitOfWork({ db: db(), outbox: testOutbox }, (uow) =>
      grantTokens(uow, {
        userId: 'inv-expiry',
        reference: 'grant:inv-expiry',
        amount: 30,
        reason: 'grant',
        expiresAt: new Date(Date.now() - 1_000),
      }),
    );
    await expireDueLots({ db: db(), outbox: testOutbox }, { batchSize: 10 });
    const messages = await messagesOf('inv-expiry');
    expect(messages.map((message) => message.type)).toEqual(['wallet.credited', 'wallet.credits_expired']);
    for (const message of messages) await deliver(message);
    expect(await check()).toEqual([]);
    // The same entry announced as a plain debit is another entry's message.
    await sql`UPDATE app_webhook_messages SET type = 'wallet.debited' WHERE type = 'wallet.credits_expired'
               AND user_id = 'inv-expiry'`.execute(db());
    expect(invariants(await check())).toContain('one wallet.* message per ledger entry');
  });

  it("report one user's messages delivered out of order, but not a failed one's successor", async () => {
    await grant('inv-order', 10);
    await grant('inv-order', 20);
    const [first, second] = await messagesOf('inv-order');
    if (!first || !second) throw new Error('two messages expected');
    await deliver(second);
    await deliver(first);
    expect(invariants(await check())).toEqual(['per-user order']);

    // A failed message stops holding the later ones: its successor may arrive before it ever does.
    await grant('inv-failed', 1);
    await grant('inv-failed', 2);
    const [refused, next] = await messagesOf('inv-failed');
    if (!refused || !next) throw new Error('two messages expected');
    await sql`UPDATE app_webhook_messages SET status = 'failed', attempts = 10 WHERE id = ${refused.id}`.execute(db());
    await deliver(next);
    expect((await check()).filter((v) => v.detail.includes('inv-failed'))).toEqual([]);
  });

  it('hold when a message is committed and delivered after the checker read the messages (the sweeper runs on)', async () => {
    // The chaos suite checks a live cluster: a lot that comes due after the settle is expired by
    // the sweeper, and its message delivered, between the checker's read of the messages and its
    // look at the receiver. That delivery is of a committed message, not of a change that does not exist.
    await inUnitOfWork({ db: db(), outbox: testOutbox }, (uow) =>
      grantTokens(uow, {
        userId: 'inv-late',
        reference: 'grant:inv-late',
        amount: 9,
        reason: 'grant',
        expiresAt: new Date(Date.now() - 1_000),
      }),
    );
    for (const message of await messagesOf('inv-late')) await deliver(message);
    let late: AppWebhookMessageRow | undefined;
    const checkerDb = db().withPlugin(
      // Right after the checker's read of every message (its rows carry `attempts`).
      new RunOnceAfter({ row: (row) => 'message_id' in row && 'attempts' in row }, async () => {
        await expireDueLots({ db: db(), outbox: testOutbox }, { batchSize: 10 });
        late = (await messagesOf('inv-late')).find((message) => message.type === 'wallet.credits_expired');
        if (late) await deliver(late);
      }),
    );
    const { violations, stats } = await checkAppWebhookInvariants(checkerDb, receiver);
    expect(late?.data).toMatchObject({ userId: 'inv-late', amount: -9, balanceAfter: 0 });
    expect(receiver.deliveries.map((delivery) => delivery.body.type)).toEqual([
      'wallet.credited',
      'wallet.credits_expired',
    ]);
    expect(violations).toEqual([]);
    // The late message is out of the read: counted neither as written nor as received.
    expect(stats).toMatchObject({ messages: 1, delivered: 1, received: 1 });

    // Still a phantom when its row is not there after its delivery arrived: the late message's row
    // gone (as a rolled-back change's would be), the same check reports it.
    await sql`DELETE FROM app_webhook_messages WHERE id = ${late?.id}`.execute(db());
    expect(invariants(await check())).toContain('no message for a change that does not exist');
  });

  it('report a message sent for a change that rolled back', async () => {
    await inUnitOfWork({ db: db(), outbox: testOutbox }, async (uow) => {
      await postLedgerEntry(uow, {
        userId: 'inv-rollback',
        reference: 'test:inv:rollback',
        amount: 5,
        reason: 'x',
        lots: plainLots(5),
      });
      const message = await uow.trx
        .selectFrom('app_webhook_messages')
        .selectAll()
        .where('user_id', '=', 'inv-rollback')
        .executeTakeFirstOrThrow();
      // Sent before the commit (what no worker may do), then the transaction rolls back.
      await deliver(message, false);
      await sql`SELECT 1/0`.execute(uow.trx);
    }).catch(() => undefined);
    expect(await db().selectFrom('ledger_entries').select('id').execute()).toEqual([]);
    expect(invariants(await check())).toEqual(['no message for a change that does not exist']);
  });

  it('report a ledger entry without its wallet.* message, and a message naming no entry', async () => {
    await grant('inv-missing', 3);
    await grant('inv-missing', 4);
    const [gone, kept] = await messagesOf('inv-missing');
    await db().deleteFrom('app_webhook_messages').where('id', '=', Number(gone?.id)).execute();
    if (kept) await deliver(kept);
    expect(invariants(await check())).toEqual(['one wallet.* message per ledger entry']);

    await sql`ALTER TABLE app_webhook_messages DROP CONSTRAINT app_webhook_messages_ledger_entry_uq`.execute(db());
    await sql`UPDATE app_webhook_messages SET ledger_entry_id = 999999 WHERE id = ${kept?.id}`.execute(db());
    expect(invariants(await check())).toEqual([
      'one wallet.* message per ledger entry',
      'no message for a change that does not exist',
    ]);
  });

  it('report a message marked delivered that the app never accepted, one left pending, and a changed body', async () => {
    await grant('inv-lie', 3);
    const [lie] = await messagesOf('inv-lie');
    await sql`UPDATE app_webhook_messages SET status = 'delivered' WHERE id = ${lie?.id}`.execute(db());
    await grant('inv-pending', 3);
    expect(invariants(await check())).toEqual(['every message delivered or failed', 'delivered ⇒ received']);

    const [changed] = await messagesOf('inv-lie');
    if (!changed) throw new Error('a message expected');
    // The receiver got other data than the message stores.
    const sender = createAppWebhookSender({ url: receiver.url, secrets, timeoutMs: 2_000 });
    await sender.send({
      webhookId: toWebhookId(changed.message_id),
      body: toAppWebhookBody({ ...changed, data: { ...(changed.data as object), amount: 4 } }),
    });
    expect(invariants(await check())).toContain('deliveries are their messages');
  });
});
