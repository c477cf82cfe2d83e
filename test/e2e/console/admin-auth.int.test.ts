import { sql } from 'kysely';
import { adminRoutes as adminRouteList } from '../../../apps/api/src/routes/api-routes';
import { adminKey, appKey, type Json, readJson } from '../../support/stack';
import { suiteStack } from '../../support/suite';

/** Every route of the admin API's list (routes/api-routes.ts), its path as Express matches it. */
function declaredAdminRoutes(): string[] {
  return adminRouteList
    .map((route) => `${route.method.toUpperCase()} ${route.path.replace(/\{(\w+)\}/g, ':$1')}`)
    .sort();
}

/** Each admin route with a concrete path to call. */
const adminRoutes: [method: string, route: string, concretePath: string][] = [
  ['GET', '/admin/events', '/admin/events'],
  ['GET', '/admin/events/:id', '/admin/events/1'],
  ['POST', '/admin/events/requeue', '/admin/events/requeue'],
  ['POST', '/admin/events/replay', '/admin/events/replay'],
  ['POST', '/admin/events/:id/requeue', '/admin/events/1/requeue'],
  ['POST', '/admin/events/:id/replay', '/admin/events/1/replay'],
  ['GET', '/admin/ledger/verify', '/admin/ledger/verify'],
  ['GET', '/admin/usage', '/admin/usage?from=2031-01-01&to=2031-01-02'],
  ['GET', '/admin/users/:userId', '/admin/users/u1'],
  ['POST', '/admin/reconcile/stripe', '/admin/reconcile/stripe'],
  ['POST', '/admin/reconcile/apple', '/admin/reconcile/apple'],
  ['POST', '/admin/users/:userId/grants', '/admin/users/u1/grants'],
  ['POST', '/admin/users/:userId/lots/:lotId/void', '/admin/users/u1/lots/1/void'],
  ['POST', '/admin/users/:userId/holds/:holdId/release', '/admin/users/u1/holds/hold_000000000000000000000000/release'],
  ['POST', '/admin/users/:userId/debt/forgive', '/admin/users/u1/debt/forgive'],
  ['GET', '/admin/users/:userId/limits', '/admin/users/u1/limits'],
  ['PUT', '/admin/users/:userId/limits', '/admin/users/u1/limits'],
  ['GET', '/admin/users/:userId/auto-topup', '/admin/users/u1/auto-topup'],
  ['POST', '/admin/users/:userId/auto-topup/disable', '/admin/users/u1/auto-topup/disable'],
  ['GET', '/admin/audit', '/admin/audit'],
  ['GET', '/admin/app-webhooks/messages', '/admin/app-webhooks/messages'],
  ['GET', '/admin/app-webhooks/messages/:id', '/admin/app-webhooks/messages/msg_00000000000000000000000000000000'],
  [
    'POST',
    '/admin/app-webhooks/messages/:id/redeliver',
    '/admin/app-webhooks/messages/msg_00000000000000000000000000000000/redeliver',
  ],
];

const basic = (user: string, password: string) => `Basic ${Buffer.from(`${user}:${password}`).toString('base64')}`;

describe('admin authentication: every /admin route, the dashboard and the console refuse missing, wrong and app keys', () => {
  const stack = suiteStack();

  it('the table below covers every route the admin API defines', () => {
    expect(adminRoutes.map(([method, route]) => `${method} ${route}`).sort()).toEqual(declaredAdminRoutes());
  });

  it.each(adminRoutes)(
    '%s %s: 401 without a key, with a wrong key and with an app key',
    async (method, _route, url) => {
      const call = (authorization: string | null) =>
        fetch(`http://127.0.0.1:${stack.api.port}${url}`, {
          method,
          headers: {
            'content-type': 'application/json',
            ...(authorization === null ? {} : { authorization }),
          },
          ...(method === 'GET' ? {} : { body: '{}' }),
        });
      for (const authorization of [
        null,
        'Bearer wrong-key',
        `Bearer ${appKey}`,
        `Bearer ${adminKey}x`,
        basic('ops', adminKey),
        adminKey,
      ]) {
        const response = await call(authorization);
        expect({ url, authorization, status: response.status }).toEqual({ url, authorization, status: 401 });
        expect((await readJson(response)).error).toBeDefined();
      }
      // The admin key gets past authentication (whatever the route then answers).
      expect((await call(`Bearer ${adminKey}`)).status).not.toBe(401);
    },
  );

  it.each([
    '/admin/queues',
    '/admin/queues/api/queues',
    '/admin/console',
    '/admin/console/events',
    '/admin/console/audit',
  ])('%s: 401 without credentials, with wrong ones and with the app key (bearer or Basic)', async (url) => {
    for (const authorization of [
      null,
      'Bearer wrong-key',
      `Bearer ${appKey}`,
      basic('ops', appKey),
      basic('ops', 'wrong'),
    ]) {
      const response = await fetch(`http://127.0.0.1:${stack.api.port}${url}`, {
        headers: authorization === null ? {} : { authorization },
      });
      expect({ url, authorization, status: response.status }).toEqual({ url, authorization, status: 401 });
    }
    const admitted = await fetch(`http://127.0.0.1:${stack.api.port}${url}`, {
      headers: { authorization: basic('ops', adminKey) },
    });
    expect(admitted.status).toBe(200);
  });
});

describe('ledger verification reports a tampered balance', () => {
  const stack = suiteStack();

  it('GET /admin/ledger/verify names the wallet whose balance no longer matches its entries', async () => {
    await stack.db.transaction().execute(async (trx) => {
      await trx.insertInto('users').values({ id: 'tampered' }).execute();
      await trx.insertInto('wallets').values({ user_id: 'tampered' }).execute();
      await trx
        .insertInto('ledger_entries')
        .values({
          user_id: 'tampered',
          reference: 'test:tamper',
          amount: 50,
          balance_before: 0,
          balance_after: 50,
          reason: 'test',
        })
        .execute();
      // As the new code writes it: the credit's lot beside the entry (docs/lots.md).
      await trx
        .insertInto('credit_lots')
        .values({ user_id: 'tampered', category: 'purchased', source: 'test:tamper', amount: 50, remaining: 50 })
        .execute();
    });
    expect(await readJson(await stack.apiRequest('/admin/ledger/verify'))).toMatchObject({
      ok: true,
      discrepancies: [],
    });

    // Only possible with the wallet guard off: this test database is thrown away afterwards.
    await sql`ALTER TABLE wallets DISABLE TRIGGER wallets_guard_balance_trg`.execute(stack.db);
    await sql`UPDATE wallets SET balance = 1000 WHERE user_id = 'tampered'`.execute(stack.db);
    await sql`ALTER TABLE wallets ENABLE TRIGGER wallets_guard_balance_trg`.execute(stack.db);

    const response = await stack.apiRequest('/admin/ledger/verify');
    expect(response.status).toBe(200);
    const body: Json = await readJson(response);
    expect(body).toEqual({
      ok: false,
      walletsChecked: 1,
      entriesChecked: 1,
      discrepancies: [
        { userId: 'tampered', problem: 'balance_differs_from_sum', detail: 'wallet holds 1000, entries sum to 50' },
        { userId: 'tampered', problem: 'lots_differ_from_balance', detail: 'wallet holds 1000, its lots hold 50' },
      ],
    });
  });
});

describe('the failure-only limiter on API keys (/v1, /admin, the dashboard)', () => {
  const stack = suiteStack({ apiFailedAuthLimit: { limit: 4, windowMs: 60_000 } });

  const dashboard = (authorization: string) =>
    fetch(`http://127.0.0.1:${stack.api.port}/admin/queues/api/queues`, { headers: { authorization } });
  const valid = async () => [
    (await stack.apiRequest('/v1/users/limit-user/wallet')).status,
    (await stack.apiRequest('/admin/users/limit-user')).status,
    (await dashboard(basic('ops', adminKey))).status,
  ];

  it('answers 429 once an IP has failed the key check too often on any of them, and never refuses or limits a valid key', async () => {
    // Failures on each surface count together (one limiter per process, per client IP).
    const failures = [
      (await stack.apiRequest('/v1/users/limit-user/wallet', { key: 'wrong-app-key' })).status,
      (await stack.apiRequest('/admin/users/limit-user', { key: appKey })).status,
      (await dashboard(basic('ops', 'wrong'))).status,
    ];
    expect(failures).toEqual([401, 401, 401]);
    expect(await valid()).toEqual([200, 200, 200]);
    expect((await stack.apiRequest('/admin/events', { key: 'wrong-admin-key' })).status).toBe(401);

    // The limit (4) is reached: every further failure, on any surface, is a 429 with Retry-After.
    for (const attempt of [
      () => stack.apiRequest('/v1/users/limit-user/ledger', { key: 'wrong-app-key' }),
      () => stack.apiRequest('/admin/events', { key: 'wrong-admin-key' }),
      () => dashboard(basic('ops', appKey)),
    ]) {
      const response = await attempt();
      expect(response.status).toBe(429);
      expect(await response.json()).toMatchObject({ error: { code: 'too_many_failed_attempts' } });
      expect(response.headers.get('ratelimit-policy')).toContain('4');
    }
    // Valid keys from the same IP still pass, everywhere, as often as they like.
    for (let i = 0; i < 10; i += 1) expect(await valid()).toEqual([200, 200, 200]);
  });
});

describe('the failure-only limiter counts only keys that were sent and wrong', () => {
  const stack = suiteStack({ apiFailedAuthLimit: { limit: 4, windowMs: 60_000 } });

  const browserAccept = 'text/html,application/xhtml+xml,application/xml;q=0.9,image/avif,image/webp,*/*;q=0.8';
  const get = (pathname: string, headers: Record<string, string> = {}) =>
    fetch(`http://127.0.0.1:${stack.api.port}${pathname}`, { headers });

  it("a browser's unauthenticated first requests never lock it out; wrong keys still do, and a locked-out browser gets a page it can show", async () => {
    // What a browser sends before it has asked its user for credentials: every page, stylesheet
    // and dashboard call once without any, many times over (one Bull Board load is about 14).
    const anonymous = ['/admin/console', '/admin/console/console.css', '/admin/queues', '/admin/queues/api/queues'];
    for (let round = 0; round < 15; round += 1) {
      for (const pathname of anonymous) {
        const response = await get(pathname, { accept: browserAccept });
        expect({ pathname, status: response.status, challenge: response.headers.get('www-authenticate') }).toEqual({
          pathname,
          status: 401,
          challenge: 'Basic realm="tally-admin"',
        });
        await response.arrayBuffer();
      }
      // /v1 and /admin without a key: challenged, not counted either.
      expect((await stack.apiRequest('/v1/users/anon-user/wallet', { key: null })).status).toBe(401);
      expect((await stack.apiRequest('/admin/events', { key: null })).status).toBe(401);
    }
    // 90 requests without credentials later, the browser's login goes through.
    expect((await get('/admin/console', { authorization: basic('ops', adminKey), accept: browserAccept })).status).toBe(
      200,
    );

    // Wrong keys count: the fifth wrong one is refused 429, as JSON for a script...
    for (let attempt = 0; attempt < 4; attempt += 1) {
      expect((await stack.apiRequest('/admin/events', { key: `wrong-${attempt}` })).status).toBe(401);
    }
    const limited = await stack.apiRequest('/admin/events', { key: 'wrong-again' });
    expect(limited.status).toBe(429);
    expect(await limited.json()).toEqual({
      error: { code: 'too_many_failed_attempts', message: 'too many requests failed authentication; retry later' },
    });

    // ...and as an HTML page, with Retry-After, for a browser that sent a wrong password.
    const page = await get('/admin/console', { authorization: basic('ops', 'wrong'), accept: browserAccept });
    expect(page.status).toBe(429);
    expect(page.headers.get('content-type')).toBe('text/html; charset=utf-8');
    const retryAfter = Number(page.headers.get('retry-after'));
    expect(retryAfter).toBeGreaterThan(0);
    expect(retryAfter).toBeLessThanOrEqual(60);
    const text = await page.text();
    expect(text).toContain('<h1>Too many wrong keys</h1>');
    expect(text).toContain(`Try again in ${retryAfter} seconds`);
    expect(text).toContain('too_many_failed_attempts');

    // While locked out, a request without credentials is still the challenge (the browser's prompt),
    // and the admin key still passes.
    const challenged = await get('/admin/console', { accept: browserAccept });
    expect({ status: challenged.status, challenge: challenged.headers.get('www-authenticate') }).toEqual({
      status: 401,
      challenge: 'Basic realm="tally-admin"',
    });
    expect((await get('/admin/console', { authorization: basic('ops', adminKey), accept: browserAccept })).status).toBe(
      200,
    );
  });
});
