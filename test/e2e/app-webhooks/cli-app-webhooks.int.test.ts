import { inUnitOfWork, plainLots, postLedgerEntry, queueCatalog, toWebhookId } from '@tally/billing-core';
import {
  createTestDatabase,
  type TestDatabase,
  testOutbox,
  testRedisUrl,
  uniqueQueuePrefix,
} from '@tally/billing-core/testing';
import { runCli } from '../../support/built-process';
import { removeTestQueue } from '../../support/remove-test-queue';

jest.setTimeout(120_000);

describe('tally app-webhooks list|show|redeliver: tables, --json as the admin API, exit 1 when nothing to do', () => {
  let database: TestDatabase;
  const prefix = uniqueQueuePrefix();
  let env: Record<string, string>;
  const userId = `cli-awh-${Date.now().toString(36)}`;

  beforeAll(async () => {
    database = await createTestDatabase();
    env = { DATABASE_URL: database.url, REDIS_URL: testRedisUrl(), QUEUE_PREFIX: prefix };
    for (const amount of [11, 12]) {
      await inUnitOfWork({ db: database.db, outbox: testOutbox }, (uow) =>
        postLedgerEntry(uow, {
          userId,
          reference: `test:cli:${amount}`,
          amount,
          reason: 'test_grant',
          lots: plainLots(amount),
        }),
      );
    }
    await database.db
      .updateTable('app_webhook_messages')
      .set({ status: 'failed', attempts: 8, last_status_code: 500, last_error: 'HTTP 500: down' })
      .where('user_id', '=', userId)
      .where('data', '@>', JSON.stringify({ amount: 11 }))
      .execute();
  });
  afterAll(async () => {
    await removeTestQueue(prefix, queueCatalog.appWebhooks);
    await database.drop();
  });

  it('lists, shows and redelivers a failed message; a pending one is not redelivered', async () => {
    const rows = await database.db.selectFrom('app_webhook_messages').selectAll().orderBy('id').execute();
    const [failed, pending] = rows.map((row) => ({ ...row, webhookId: toWebhookId(row.message_id) }));
    if (!failed || !pending) throw new Error('two messages expected');

    const list = await runCli(['app-webhooks', 'list', '--status', 'failed', '--json'], env);
    expect({ code: list.code, stderr: list.stderr }).toEqual({ code: 0, stderr: '' });
    expect(JSON.parse(list.stdout)).toEqual({
      messages: [
        {
          id: failed.webhookId,
          type: 'wallet.credited',
          userId,
          status: 'failed',
          attempts: 8,
          lastStatusCode: 500,
          lastError: 'HTTP 500: down',
          nextAttemptAt: null,
          createdAt: failed.created_at.toISOString(),
          deliveredAt: null,
        },
      ],
      nextCursor: null,
    });
    const table = await runCli(['app-webhooks', 'list', '--user', userId], env);
    expect(table.code).toBe(0);
    expect(table.stdout.split('\n')[0]).toMatch(/^ID\s+TYPE\s+USER\s+STATUS\s+ATTEMPTS/);
    expect(table.stdout).toContain(pending.webhookId);

    const shown = await runCli(['app-webhooks', 'show', failed.webhookId, '--json'], env);
    expect(shown.code).toBe(0);
    expect(JSON.parse(JSON.parse(shown.stdout).body)).toEqual({
      type: 'wallet.credited',
      timestamp: failed.created_at.toISOString(),
      data: expect.objectContaining({ userId, amount: 11, balanceBefore: 0, balanceAfter: 11 }),
    });

    const redelivered = await runCli(['app-webhooks', 'redeliver', failed.webhookId, '--json'], env);
    expect({ code: redelivered.code, stderr: redelivered.stderr }).toEqual({ code: 0, stderr: '' });
    expect(JSON.parse(redelivered.stdout)).toMatchObject({
      redelivered: 1,
      message: { id: failed.webhookId, status: 'pending', attempts: 0 },
      enqueued: 1,
    });
    const notFinished = await runCli(['app-webhooks', 'redeliver', pending.webhookId, '--json'], env);
    expect(notFinished.code).toBe(1);
    expect(JSON.parse(notFinished.stdout)).toEqual({ error: { code: 'not_finished', message: expect.any(String) } });
    const unknown = await runCli(['app-webhooks', 'show', 'msg_00000000000000000000000000000000', '--json'], env);
    expect(unknown.code).toBe(1);
    expect(JSON.parse(unknown.stdout)).toEqual({ error: { code: 'not_found', message: expect.any(String) } });
  });
});
