import { type Json, readJson } from '../../support/stack';
import { stripeId } from '../../support/stripe-events';
import { suiteStackWithFakeStripe } from '../../support/suite';

/**
 * A field the route does not take is a 400 naming it, never ignored (docs/interface.md, "Bodies"):
 * ignored, a misspelt `expires_at` would grant tokens that never expire, `ttlSeconds` would give a
 * hold the default life, `{"amount": 5}` on a release would free the whole hold, `userid` in a
 * requeue filter would requeue every user's events and `dryrun` would run a real reconciliation.
 * Each refusal leaves nothing behind, over HTTP against real Postgres.
 */
describe('request bodies: unknown fields are refused, not ignored', () => {
  const { stack } = suiteStackWithFakeStripe();

  const post = async (path: string, body?: Json) => {
    const response = await stack.apiRequest(path, { method: 'POST', ...(body === undefined ? {} : { body }) });
    return { status: response.status, body: await readJson(response) };
  };
  const refused = (message: string) => ({ status: 400, body: { error: { code: 'invalid_request', message } } });
  const wallet = async (userId: string) => {
    const response = await stack.apiRequest(`/v1/users/${userId}/wallet`);
    return readJson(response);
  };
  const ledgerCount = async (userId: string) =>
    (await stack.db.selectFrom('ledger_entries').select('id').where('user_id', '=', userId).execute()).length;

  it('a grant with a misspelt expiry is refused and grants nothing; the same grant spelt right expires', async () => {
    const userId = stripeId('user');
    const expiresAt = new Date(Date.now() + 3600_000).toISOString();
    expect(
      await post(`/v1/users/${userId}/grants`, { amount: 40, reference: 'promo-1', expires_at: expiresAt }),
    ).toEqual(refused('unknown field "expires_at"'));
    expect(await ledgerCount(userId)).toBe(0);
    const granted = await post(`/v1/users/${userId}/grants`, { amount: 40, reference: 'promo-1', expiresAt });
    expect(granted).toEqual({ status: 201, body: expect.objectContaining({ amount: 40, expiresAt }) });
    expect(
      await post(`/admin/users/${userId}/grants`, { amount: 5, notes: 'ticket 12', category: 'purchased' }),
    ).toEqual(refused('unknown fields "notes", "category"'));
    expect(await ledgerCount(userId)).toBe(1);
  });

  it('debits, holds and captures refuse fields they do not take; a release with a body is refused and the hold stays held', async () => {
    const userId = stripeId('user');
    await post(`/v1/users/${userId}/grants`, { amount: 100, reference: 'start' });
    expect(await post(`/v1/users/${userId}/debits`, { amount: 5, reference: 'd-1', memo: 'x' })).toEqual(
      refused('unknown field "memo"'),
    );
    expect(await post(`/v1/users/${userId}/holds`, { amount: 30, reference: 'job-1', ttlSeconds: 60 })).toEqual(
      refused('unknown field "ttlSeconds"'),
    );
    expect((await wallet(userId)).held).toBe(0);
    const hold = await post(`/v1/users/${userId}/holds`, { amount: 30, reference: 'job-1', expiresInSeconds: 60 });
    expect(hold.status).toBe(201);
    const holdPath = `/v1/users/${userId}/holds/${hold.body.id}`;
    expect(await post(`${holdPath}/capture`, { amount: 10, final: true })).toEqual(refused('unknown field "final"'));
    expect(await post(`${holdPath}/release`, { amount: 5 })).toEqual(refused('unknown field "amount"'));
    expect(await wallet(userId)).toEqual(expect.objectContaining({ balance: 100, held: 30, available: 70 }));
    expect(await post(`/admin/users/${userId}/holds/${hold.body.id}/release`, { reason: 'x' })).toEqual(
      refused('unknown field "reason"'),
    );
    // No body and an empty object are both "no fields".
    expect((await post(`${holdPath}/release`, {})).body).toEqual({
      id: hold.body.id,
      status: 'released',
      available: 100,
    });
    expect(await ledgerCount(userId)).toBe(1);
  });

  it('support: a void with a body is refused and the lot keeps its tokens', async () => {
    const userId = stripeId('user');
    const granted = await post(`/admin/users/${userId}/grants`, { amount: 25, reference: 'goodwill-9' });
    expect(await post(`/admin/users/${userId}/lots/${granted.body.lotId}/void`, { amount: 10 })).toEqual(
      refused('unknown field "amount"'),
    );
    expect((await wallet(userId)).balance).toBe(25);
    expect((await post(`/admin/users/${userId}/lots/${granted.body.lotId}/void`)).body).toEqual(
      expect.objectContaining({ taken: 25, balance: 0 }),
    );
  });

  it('operators: a misspelt requeue or replay filter and a misspelt dryRun are refused before anything runs, audited as refused', async () => {
    // Every admin POST is audited, a refused one too: with its 400, and nothing done.
    const audited = () =>
      stack.db.selectFrom('admin_audit').select(['id', 'action', 'status_code', 'outcome']).orderBy('id').execute();
    const before = (await audited()).length;
    expect(await post('/admin/events/requeue', { userid: 'u1' })).toEqual(refused('unknown field "userid"'));
    expect(await post('/admin/events/replay', { provider: 'stripe', user_id: 'u1' })).toEqual(
      refused('unknown field "user_id"'),
    );
    expect(await post('/admin/reconcile/stripe', { dryrun: true })).toEqual(refused('unknown field "dryrun"'));
    expect(await post('/admin/events/1/requeue', { force: true })).toEqual(refused('unknown field "force"'));
    expect(
      await post('/admin/app-webhooks/messages/msg_0123456789abcdef0123456789abcdef/redeliver', { now: 1 }),
    ).toEqual(refused('unknown field "now"'));
    // (A reconciliation's audit opens with a `started` row before the body is read.)
    const finished = (await audited()).slice(before).filter((row) => row.outcome !== 'started');
    expect(finished.map((row) => [row.action, row.status_code, row.outcome])).toEqual([
      ['inbox.requeue_by_filter', 400, 'invalid_request'],
      ['inbox.replay_by_filter', 400, 'invalid_request'],
      ['reconcile.stripe', 400, 'invalid_request'],
      ['inbox.requeue', 400, 'invalid_request'],
      ['app_webhook.redeliver', 400, 'invalid_request'],
    ]);
  });

  it('every POST the document describes without a body refuses one with a field (a new route cannot forget it)', async () => {
    const document = await readJson(await stack.apiRequest('/openapi.json', { key: null }));
    // Ids of the right shape (their checks come first), of nothing that exists: the body is refused before any look-up.
    const ids: Record<string, string> = {
      userId: stripeId('user'),
      holdId: `hold_${'0'.repeat(24)}`,
      id: '1',
      lotId: '1',
      reference: 'tu_abcdefgh12345678',
    };
    const bodiless = Object.entries(document.paths as Record<string, Record<string, { requestBody?: unknown }>>)
      .filter(([, operations]) => operations.post !== undefined && operations.post.requestBody === undefined)
      .map(([template]) =>
        template
          .replace('/messages/{id}', `/messages/msg_${'0'.repeat(32)}`)
          .replace(/\{(\w+)\}/g, (_whole, name: string) => ids[name] ?? `{${name}}`),
      );
    expect(bodiless.length).toBeGreaterThanOrEqual(8);
    const answers = [];
    for (const path of bodiless) answers.push([path, await post(path, { x: 1 })]);
    expect(answers).toEqual(bodiless.map((path) => [path, refused('unknown field "x"')]));
  });

  it('list filters: a parameter a list does not take is refused, never read as "no filter"', async () => {
    const get = async (path: string) => {
      const response = await stack.apiRequest(path);
      return { status: response.status, body: await readJson(response) };
    };
    const userId = stripeId('user');
    await post(`/v1/users/${userId}/grants`, { amount: 10, reference: 'filters' });
    // Ignored, `user_id` would list every user's events to an operator looking at one user.
    expect(await get(`/admin/events?user_id=${userId}`)).toEqual(refused('unknown parameter "user_id"'));
    expect((await get(`/admin/events?userId=${userId}`)).status).toBe(200);
    expect(await get(`/admin/app-webhooks/messages?user=${userId}`)).toEqual(refused('unknown parameter "user"'));
    expect(await get('/admin/audit?target=x')).toEqual(refused('unknown parameter "target"'));
    expect(await get(`/admin/users/${userId}?eventLimits=5`)).toEqual(refused('unknown parameter "eventLimits"'));
    expect(await get(`/v1/users/${userId}/ledger?page=2`)).toEqual(refused('unknown parameter "page"'));
    expect(await get(`/v1/users/${userId}/holds?state=held`)).toEqual(refused('unknown parameter "state"'));
    expect(await get(`/v1/users/${userId}/studio/requests?status=done`)).toEqual(refused('unknown parameter "status"'));
    expect((await get(`/v1/users/${userId}/ledger?limit=5`)).body.entries).toHaveLength(1);
  });

  it('the app: top-up and subscription sync bodies are held to what they take', async () => {
    const userId = stripeId('user');
    expect(await post(`/v1/users/${userId}/topups`, { packId: 'tokens_100', quantity: 2 })).toEqual(
      refused('unknown field "quantity"'),
    );
    expect(await post(`/v1/users/${userId}/topups/tu_abcdefgh12345678/confirm`, { paid: true })).toEqual(
      refused('unknown field "paid"'),
    );
    expect(await post(`/v1/users/${userId}/subscription/sync`, { force: true })).toEqual(
      refused('unknown field "force"'),
    );
  });
});
