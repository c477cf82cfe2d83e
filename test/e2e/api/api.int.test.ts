import { linkUserIds } from '@tally/billing-core';
import { stripeTokenPackPayment } from '../../support/events';
import { purchasedLot } from '../../support/ledger';
import { checkApiAnswer } from '../../support/openapi-answers';
import { adminKey, appKey, readJson, TestStack } from '../../support/stack';
import { suiteStack } from '../../support/suite';

describe('the API', () => {
  let stack: TestStack;
  beforeAll(async () => {
    stack = await TestStack.start();
    for (const [reference, amount] of [
      ['test:api:1', 100],
      ['test:api:2', 50],
      ['test:api:3', -20],
    ] as const) {
      await stack.postPlainEntry({ userId: 'api-user', reference, amount, reason: 'test' });
    }
  });
  afterAll(() => stack.stop());

  it('answers 401 without a key, with a wrong key, and with an admin key on /v1 or an app key on /admin', async () => {
    for (const [path, key] of [
      ['/v1/users/api-user/wallet', null],
      ['/v1/users/api-user/wallet', 'wrong'],
      ['/v1/users/api-user/wallet', adminKey],
      ['/admin/events', appKey],
      ['/admin/ledger/verify', null],
    ] as const) {
      const response = await stack.apiRequest(path, { key });
      expect({ path, key, status: response.status }).toEqual({ path, key, status: 401 });
      expect(await response.json()).toEqual({ error: { code: 'unauthorized', message: expect.any(String) } });
    }
  });

  it('returns the wallet, and a zero balance for a user never credited', async () => {
    // Its lots in the draw order: both never expire and are purchased, so the oldest comes first
    // (the debit of 20 drew from it).
    expect(await (await stack.apiRequest('/v1/users/api-user/wallet')).json()).toEqual({
      userId: 'api-user',
      balance: 130,
      held: 0,
      available: 130,
      debt: 0,
      lots: [purchasedLot('test:api:1', 100, 80), purchasedLot('test:api:2', 50)],
    });
    expect(await (await stack.apiRequest('/v1/users/nobody/wallet')).json()).toEqual({
      userId: 'nobody',
      balance: 0,
      held: 0,
      available: 0,
      debt: 0,
      lots: [],
    });
  });

  it('returns the ledger newest first, paged with a cursor', async () => {
    const wallet = await readJson(await stack.apiRequest('/v1/users/api-user/wallet'));
    const first = await readJson(await stack.apiRequest('/v1/users/api-user/ledger?limit=2'));
    expect(first.entries).toEqual([
      {
        reference: 'test:api:3',
        amount: -20,
        balanceBefore: 150,
        balanceAfter: 130,
        reason: 'test',
        createdAt: expect.any(String),
        // A debit lists what it drew: all 20 from the oldest lot.
        draws: [{ lotId: wallet.lots[0].id, amount: 20 }],
      },
      {
        reference: 'test:api:2',
        amount: 50,
        balanceBefore: 100,
        balanceAfter: 150,
        reason: 'test',
        createdAt: expect.any(String),
      },
    ]);
    expect(first.nextCursor).toEqual(expect.any(String));
    const second = await readJson(
      await stack.apiRequest(`/v1/users/api-user/ledger?limit=2&cursor=${first.nextCursor}`),
    );
    expect(second.entries.map((entry: { reference: string }) => entry.reference)).toEqual(['test:api:1']);
    expect(second.nextCursor).toBeNull();
  });

  it('answers 400 with a JSON error for bad query parameters', async () => {
    const response = await stack.apiRequest('/v1/users/api-user/ledger?limit=0');
    expect(response.status).toBe(400);
    expect(await response.json()).toEqual({
      error: { code: 'invalid_request', message: expect.stringContaining('limit') },
    });
  });

  it('answers 415 unsupported_media_type naming application/json for a POST body of another type (curl -d), and reads a JSON one', async () => {
    const post = async (path: string, key: string, body: string | undefined, contentType?: string) => {
      const headers: Record<string, string> = { authorization: `Bearer ${key}` };
      if (contentType !== undefined) headers['content-type'] = contentType;
      const response = await fetch(`http://127.0.0.1:${stack.api.port}${path}`, {
        method: 'POST',
        headers,
        ...(body === undefined ? {} : { body }),
      });
      await checkApiAnswer('POST', path, response);
      return { status: response.status, body: await response.json() };
    };
    const form = 'application/x-www-form-urlencoded';
    // What `curl -d 'amount=5&reference=r1'` sends, to the app's and the operator's routes.
    expect(await post('/v1/users/api-user/debits', appKey, 'amount=5&reference=r1', form)).toEqual({
      status: 415,
      body: {
        error: {
          code: 'unsupported_media_type',
          message: `the body must be JSON sent with Content-Type: application/json (this request sent "${form}")`,
        },
      },
    });
    expect(await post('/admin/users/api-user/grants', adminKey, '{"amount":5}', 'text/plain')).toMatchObject({
      status: 415,
      body: { error: { code: 'unsupported_media_type' } },
    });
    // Nothing was debited or granted.
    expect(await readJson(await stack.apiRequest('/v1/users/api-user/wallet'))).toMatchObject({ balance: 130 });
    // JSON (with a charset too) is read; a POST that takes no body may still be sent bare.
    expect(
      await post('/v1/users/api-user/debits', appKey, '{"amount":5}', 'application/json; charset=utf-8'),
    ).toMatchObject({ status: 400, body: { error: { code: 'invalid_request' } } });
    expect(await post('/admin/events/999999/requeue', adminKey, undefined)).toMatchObject({
      status: 404,
      body: { error: { code: 'not_found' } },
    });
    // The key check comes first: a wrong key with a form body is a 401.
    expect((await post('/v1/users/api-user/debits', 'wrong', 'amount=5', form)).status).toBe(401);
  });

  it('answers 400 invalid_request naming the rule when an event id in the path is not a positive whole number', async () => {
    for (const [method, path] of [
      ['GET', '/admin/events/abc'],
      ['GET', '/admin/events/0'],
      ['GET', '/admin/events/1.5'],
      ['GET', '/admin/events/-3'],
      ['GET', '/admin/events/1e3'],
      ['GET', '/admin/events/99999999999999999999'],
      ['POST', '/admin/events/abc/requeue'],
    ] as const) {
      const response = await stack.apiRequest(path, { method });
      expect({ method, path, status: response.status, body: await response.json() }).toEqual({
        method,
        path,
        status: 400,
        body: { error: { code: 'invalid_request', message: 'event id must be a positive whole number' } },
      });
    }
    const missing = await stack.apiRequest('/admin/events/123456789');
    expect({ status: missing.status, body: await missing.json() }).toEqual({
      status: 404,
      body: { error: { code: 'not_found', message: 'inbox event 123456789 does not exist' } },
    });
  });

  it('verifies the ledger for admins', async () => {
    const response = await stack.apiRequest('/admin/ledger/verify');
    expect(response.status).toBe(200);
    expect(await response.json()).toEqual({ ok: true, walletsChecked: 1, entriesChecked: 3, discrepancies: [] });
  });

  it('serves health, readiness and metrics', async () => {
    const base = `http://127.0.0.1:${stack.api.port}`;
    expect(await (await fetch(`${base}/healthz`)).json()).toEqual({ status: 'ok' });
    expect(await (await fetch(`${base}/readyz`)).json()).toEqual({
      status: 'ready',
      checks: { postgres: 'ok', redis: 'ok' },
    });
    const metrics = await (await fetch(`${base}/metrics`)).text();
    expect(metrics).toContain('tally_process_cpu_seconds_total{service="api"}');
    // Only what the api itself moves: no webhook counters, no worker gauges.
    expect(metrics).not.toContain('tally_webhook_requests_total');
    expect(metrics).not.toContain('tally_queue_jobs');
  });
});

describe('the admin event list filtered by outcome', () => {
  const stack = suiteStack();

  type Listed = { id: number; providerEventId: string; status: string; outcome: { code: string } | null };
  const list = async (query: string) => {
    const response = await stack.apiRequest(`/admin/events?${query}`);
    expect({ query, status: response.status }).toEqual({ query, status: 200 });
    const page = (await response.json()) as { events: Listed[]; nextCursor: string | null };
    return { ...page, ids: page.events.map((event) => event.providerEventId) };
  };

  it('lists exactly the events with the given outcome code, newest first, combined with the other filters and paged', async () => {
    // Two credited packs, one parked (unknown pack), processed by a real worker.
    const delivered: string[] = [];
    for (const [eventId, packId] of [
      ['evt_outcome_credited_1', 'tokens_100'],
      ['evt_outcome_invalid', 'no_such_pack'],
      ['evt_outcome_credited_2', 'tokens_100'],
    ] as const) {
      delivered.push(
        await stack.deliverStripe(stripeTokenPackPayment({ eventId, userId: `outcome-${eventId}`, packId })),
      );
    }
    stack.startWorker();
    for (const eventId of delivered) await stack.finishedInboxRow('stripe', eventId);

    const credited = await list('outcome=credited');
    expect(credited.ids).toEqual(['evt_outcome_credited_2', 'evt_outcome_credited_1']);
    expect(credited.events.map((event) => [event.status, event.outcome?.code])).toEqual([
      ['processed', 'credited'],
      ['processed', 'credited'],
    ]);
    expect(credited.nextCursor).toBeNull();
    expect((await list('outcome=invalid_event')).events).toEqual([
      expect.objectContaining({
        providerEventId: 'evt_outcome_invalid',
        status: 'failed',
        outcome: expect.objectContaining({ code: 'invalid_event' }),
      }),
    ]);
    // Other filters narrow further; a code nothing has matches nothing.
    expect((await list('outcome=credited&status=failed')).ids).toEqual([]);
    expect((await list('outcome=credited&provider=revenuecat')).ids).toEqual([]);
    expect((await list('outcome=credited&userId=outcome-evt_outcome_credited_1')).ids).toEqual([
      'evt_outcome_credited_1',
    ]);
    expect((await list('outcome=reference_conflict')).ids).toEqual([]);
    // Paged with the cursor, the filter still holds on the next page.
    const first = await list('outcome=credited&limit=1');
    expect(first.ids).toEqual(['evt_outcome_credited_2']);
    expect((await list(`outcome=credited&limit=1&cursor=${first.nextCursor}`)).ids).toEqual(['evt_outcome_credited_1']);
  });

  it('answers 400 invalid_request for an outcome that is not a code', async () => {
    const response = await stack.apiRequest('/admin/events?outcome=Credited%20OR%201%3D1');
    expect({ status: response.status, body: await response.json() }).toEqual({
      status: 400,
      body: { error: { code: 'invalid_request', message: expect.stringContaining('outcome') } },
    });
  });
});

describe('the user routes under load', () => {
  const stack = suiteStack();

  it('resolves the ids of requests arriving together to their users, each answered for its own (linked, canonical, unknown)', async () => {
    // Two customers known by an anonymous id too, and balances that tell them apart.
    for (const [owner, anonymous, amount] of [
      ['scope-owner-1', '$RCAnonymousID:00000000000000a1', 11],
      ['scope-owner-2', '$RCAnonymousID:00000000000000a2', 22],
    ] as const) {
      expect(await stack.transaction((uow) => linkUserIds(uow, [owner, anonymous]))).toBe(owner);
      await stack.postPlainEntry({ userId: owner, reference: `test:scope:${owner}`, amount, reason: 'test' });
    }
    const balanceOf: Record<string, number> = {
      'scope-owner-1': 11,
      '$RCAnonymousID:00000000000000a1': 11,
      'scope-owner-2': 22,
      '$RCAnonymousID:00000000000000a2': 22,
      'scope-nobody': 0,
    };
    // Forty at once, each id several times in a shuffled order: look-ups beyond the two in flight
    // go together (createUserRoutes), and each request must still read its own user's wallet.
    const ids = Array.from({ length: 40 }, (_, n) => Object.keys(balanceOf)[(n * 7) % 5] as string);
    const answers = await Promise.all(
      ids.map(async (id) => {
        const response = await stack.apiRequest(`/v1/users/${encodeURIComponent(id)}/wallet`);
        const body = await readJson(response);
        return { id, status: response.status, userId: body.userId, balance: body.balance };
      }),
    );
    expect(answers).toEqual(ids.map((id) => ({ id, status: 200, userId: id, balance: balanceOf[id] })));
  });
});
