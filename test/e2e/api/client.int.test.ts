import { AppWebhookVerificationError, verifyAppWebhook } from '@tally/client';
import { deliveringTo } from '../../support/app-webhook-worker';
import { AppWebhookReceiver, newWebhookSecret } from '../../support/fakes/app-webhook-receiver';
import { adminKey, eventually, TestStack } from '../../support/stack';

/**
 * @tally/client against a real api (every answer also matched against the OpenAPI document by
 * the stack's client), and verifyAppWebhook on a real delivery of the worker.
 */
describe('@tally/client against a real api', () => {
  let stack: TestStack;
  let receiver: AppWebhookReceiver;
  const secret = newWebhookSecret();
  let seq = 0;
  const newUser = (what: string) => `client-${what}-${++seq}-${Date.now().toString(36)}`;

  beforeAll(async () => {
    receiver = await AppWebhookReceiver.start([secret]);
    stack = await TestStack.start();
  });
  afterAll(async () => {
    await stack?.stop();
    await receiver?.stop();
  });

  it('grants, reads the wallet and the ledger, typed', async () => {
    const client = stack.client();
    const userId = newUser('wallet');
    const granted = await client.POST('/v1/users/{userId}/grants', {
      params: { path: { userId } },
      body: { amount: 40, reference: `welcome-${userId}` },
    });
    expect(granted.response.status).toBe(201);
    expect(granted.data).toMatchObject({ amount: 40, balance: 40, expiresAt: null });
    const again = await client.POST('/v1/users/{userId}/grants', {
      params: { path: { userId } },
      body: { amount: 40, reference: `welcome-${userId}` },
    });
    expect([again.response.status, again.data?.lotId]).toEqual([200, granted.data?.lotId]);

    const wallet = await client.GET('/v1/users/{userId}/wallet', { params: { path: { userId } } });
    const balance: number | undefined = wallet.data?.balance;
    expect(balance).toBe(40);
    expect(wallet.data?.lots).toEqual([
      expect.objectContaining({ id: granted.data?.lotId, category: 'promotional', amount: 40, remaining: 40 }),
    ]);
    const ledger = await client.GET('/v1/users/{userId}/ledger', {
      params: { path: { userId }, query: { limit: 10 } },
    });
    expect(ledger.data?.entries.map((entry) => entry.amount)).toEqual([40]);
    expect(ledger.data?.nextCursor).toBeNull();
  });

  it('debits, holds, captures, releases and checks, typed', async () => {
    const client = stack.client();
    const userId = newUser('spend');
    await client.POST('/v1/users/{userId}/grants', {
      params: { path: { userId } },
      body: { amount: 100, reference: `fund-${userId}` },
    });
    const debit = await client.POST('/v1/users/{userId}/debits', {
      params: { path: { userId } },
      body: { amount: 10, reference: `boost-${userId}` },
    });
    expect(debit.response.status).toBe(201);
    const ledgerReference: string | undefined = debit.data?.ledgerReference;
    expect([ledgerReference, debit.data?.balance, debit.data?.available]).toEqual([`debit:boost-${userId}`, 90, 90]);

    const hold = await client.POST('/v1/users/{userId}/holds', {
      params: { path: { userId } },
      body: { amount: 30, reference: `llm-${userId}`, expiresInSeconds: 600 },
    });
    expect([hold.response.status, hold.data?.status, hold.data?.available]).toEqual([201, 'held', 60]);
    const holdId = hold.data?.id ?? '';
    const check = await client.GET('/v1/users/{userId}/check', {
      params: { path: { userId }, query: { amount: 61 } },
    });
    expect(check.data).toEqual({ allowed: false, amount: 61, balance: 90, held: 30, available: 60 });
    const capture = await client.POST('/v1/users/{userId}/holds/{holdId}/capture', {
      params: { path: { userId, holdId } },
      body: { amount: 12 },
    });
    expect(capture.data).toMatchObject({ status: 'captured', captured: 12, released: 18, balance: 78, available: 78 });
    const late = await client.POST('/v1/users/{userId}/holds/{holdId}/release', {
      params: { path: { userId, holdId } },
    });
    const lateCode: string | undefined = late.error?.error.code;
    expect([late.response.status, lateCode]).toEqual([409, 'hold_not_active']);
    const read = await client.GET('/v1/users/{userId}/holds/{holdId}', { params: { path: { userId, holdId } } });
    expect(read.data).toMatchObject({ id: holdId, status: 'captured', captured: 12 });
    const short = await client.POST('/v1/users/{userId}/debits', {
      params: { path: { userId } },
      body: { amount: 1000, reference: `big-${userId}` },
    });
    expect([short.response.status, short.error?.error.code]).toEqual([402, 'insufficient_balance']);
  });

  it('starts and reads a studio request, typed', async () => {
    const client = stack.client();
    const userId = newUser('studio');
    const created = await client.POST('/v1/users/{userId}/studio/requests', {
      params: { path: { userId } },
      body: { kind: 'image_edit', input: { prompt: 'a cat' } },
      headers: { 'Idempotency-Key': `studio-${userId}` },
    });
    expect(created.response.status).toBe(202);
    const id = created.data?.id ?? '';
    const replay = await client.POST('/v1/users/{userId}/studio/requests', {
      params: { path: { userId } },
      body: { kind: 'image_edit', input: { prompt: 'a cat' } },
      headers: { 'Idempotency-Key': `studio-${userId}` },
    });
    expect([replay.response.status, replay.response.headers.get('idempotent-replayed'), replay.data?.id]).toEqual([
      202,
      'true',
      id,
    ]);
    const read = await client.GET('/v1/users/{userId}/studio/requests/{requestId}', {
      params: { path: { userId, requestId: id } },
    });
    expect(read.data).toMatchObject({ id, kind: 'image_edit', freeTier: true, input: { prompt: 'a cat' } });
    const list = await client.GET('/v1/users/{userId}/studio/requests', { params: { path: { userId } } });
    expect(list.data?.requests.map((request) => request.id)).toEqual([id]);
  });

  it('types the errors: their code and message, by route and status', async () => {
    const client = stack.client();
    const userId = newUser('errors');
    const none = await client.GET('/v1/users/{userId}/subscription', { params: { path: { userId } } });
    expect(none.response.status).toBe(404);
    const code: string | undefined = none.error?.error.code;
    expect(code).toBe('not_found');

    const bad = await client.POST('/v1/users/{userId}/grants', {
      params: { path: { userId } },
      body: { amount: -1, reference: 'x' },
    });
    expect([bad.response.status, bad.error?.error.code]).toEqual([400, 'invalid_request']);

    // Five image edits a day are free (the example catalog); the sixth costs 5 and the wallet is empty.
    const edit = () =>
      client.POST('/v1/users/{userId}/studio/requests', {
        params: { path: { userId } },
        body: { kind: 'image_edit', input: {} },
      });
    for (let free = 0; free < 5; free++) expect((await edit()).response.status).toBe(202);
    const poor = await edit();
    expect(poor.response.status).toBe(402);
    expect(poor.error).toEqual({
      error: { code: 'insufficient_balance', message: expect.any(String) },
      balance: 0,
      available: 0,
      price: 5,
    });

    const wrongKey = await stack.client('not-a-key').GET('/v1/users/{userId}/wallet', { params: { path: { userId } } });
    expect([wrongKey.response.status, wrongKey.error?.error.code]).toEqual([401, 'unauthorized']);
  });

  it('reads the admin API with an admin key', async () => {
    const admin = stack.client(adminKey);
    const userId = newUser('admin');
    const granted = await admin.POST('/admin/users/{userId}/grants', {
      params: { path: { userId } },
      body: { amount: 5, note: 'sorry' },
    });
    expect(granted.response.status).toBe(201);
    const view = await admin.GET('/admin/users/{userId}', { params: { path: { userId } } });
    expect(view.data?.wallet.balance).toBe(5);
    const events = await admin.GET('/admin/events', { params: { query: { limit: 5 } } });
    expect(Array.isArray(events.data?.events)).toBe(true);
  });

  it('verifyAppWebhook returns the typed event of a real delivery and refuses a tampered one', async () => {
    stack.startWorker(deliveringTo(receiver, { retryScheduleMs: [100], roles: ['relay', 'app-webhooks'] }));
    const userId = newUser('webhook');
    const granted = await stack.client().POST('/v1/users/{userId}/grants', {
      params: { path: { userId } },
      body: { amount: 7, reference: `hook-${userId}` },
    });
    expect(granted.response.status).toBe(201);
    const delivery = await eventually('the wallet.credited delivery', async () =>
      receiver.accepted.find((received) => received.body.data.userId === userId),
    );
    const headers = {
      'webhook-id': delivery.webhookId,
      'webhook-timestamp': delivery.timestamp,
      'webhook-signature': delivery.signature,
    };

    const event = verifyAppWebhook(delivery.rawBody, headers, [newWebhookSecret(), secret]);
    if (event.type !== 'wallet.credited') throw new Error(`expected wallet.credited, got ${event.type}`);
    const amount: number = event.data.amount;
    expect([amount, event.data.userId, event.data.balanceAfter]).toEqual([7, userId, 7]);

    const tampered = delivery.rawBody.replace('"amount":7', '"amount":7000');
    expect(tampered).not.toBe(delivery.rawBody);
    expect(() => verifyAppWebhook(tampered, headers, [secret])).toThrow(AppWebhookVerificationError);
    expect(() => verifyAppWebhook(delivery.rawBody, headers, [newWebhookSecret()])).toThrow(
      AppWebhookVerificationError,
    );
  });
});
