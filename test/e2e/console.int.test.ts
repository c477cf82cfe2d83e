import { createHash } from 'node:crypto';
import { findWallet, inboxJobId } from '@tally/billing-core';
import { sql } from 'kysely';
import { runCli } from '../support/built-process';
import { revenueCatTokenPurchase } from '../support/events';
import { basicAuth, parkTokenPurchase, startBrokenRevenueCatWorker } from '../support/parked-events';
import { adminKey, appKey, eventually, type Json, readJson, TestStack } from '../support/stack';

const fingerprint = createHash('sha256').update(adminKey).digest('hex').slice(0, 12);

describe('the console at /admin/console and the audit of admin actions', () => {
  let stack: TestStack;

  beforeAll(async () => {
    stack = await TestStack.start();
  });
  afterAll(() => stack.stop());
  afterEach(() => stack.stopWorkers());

  const consoleGet = (path: string, authorization = basicAuth('support', adminKey)) =>
    fetch(`http://127.0.0.1:${stack.api.port}/admin/console${path}`, {
      headers: { authorization },
      redirect: 'manual',
    });
  const consolePost = (path: string, headers: Record<string, string>, body?: string) =>
    fetch(`http://127.0.0.1:${stack.api.port}/admin/console${path}`, {
      method: 'POST',
      headers: { authorization: basicAuth('support', adminKey), ...headers },
      redirect: 'manual',
      ...(body === undefined ? {} : { body }),
    });
  const sameOrigin = () => ({ origin: `http://127.0.0.1:${stack.api.port}`, 'sec-fetch-site': 'same-origin' });
  const auditRows = () => stack.db.selectFrom('admin_audit').selectAll().orderBy('id').execute();

  it('asks for the admin key as the Basic password and refuses app keys', async () => {
    const missing = await fetch(`http://127.0.0.1:${stack.api.port}/admin/console`);
    expect(missing.status).toBe(401);
    expect(missing.headers.get('www-authenticate')).toBe('Basic realm="tally-admin"');
    expect((await consoleGet('', basicAuth('support', appKey))).status).toBe(401);
    expect((await consoleGet('', `Bearer ${appKey}`)).status).toBe(401);
    const ok = await consoleGet('');
    expect(ok.status).toBe(200);
    expect(await ok.text()).toContain('Queue depths');
  });

  it('renders every interpolated value as text: a user id and an event type holding <script> are escaped', async () => {
    stack.startWorker();
    const userId = '<script>alert("u")</script>';
    await stack.postRevenueCat(revenueCatTokenPurchase({ id: 'rc-xss-1', userId }));
    const hostileType = JSON.parse(
      revenueCatTokenPurchase({ id: 'rc-xss-2', userId: 'x"><img src=x onerror=alert(1)>' }),
    );
    hostileType.event.type = '<script>alert("t")</script>';
    await stack.postRevenueCat(JSON.stringify(hostileType));
    await stack.finishedInboxRow('revenuecat', 'rc-xss-1');
    const typed = await stack.finishedInboxRow('revenuecat', 'rc-xss-2');
    expect(await findWallet(stack.db, userId)).toEqual({ userId, balance: 100 });

    const pages = [
      `/users/${encodeURIComponent(userId)}`,
      `/events?type=${encodeURIComponent('<script>alert("t")</script>')}`,
      `/events/${typed.id}`,
      `/search?q=${encodeURIComponent('<script>nothing</script>')}`,
      `/events?userId=${encodeURIComponent('x"><img src=x onerror=alert(1)>')}`,
      '',
    ];
    for (const path of pages) {
      const response = await consoleGet(path);
      const body = await response.text();
      expect(body).not.toMatch(/<script/i);
      expect(body).not.toMatch(/<img/i);
    }
    const user = await (await consoleGet(pages[0] ?? '')).text();
    expect(user).toContain('User &lt;script&gt;alert(&quot;u&quot;)&lt;/script&gt;');
    expect(user).toContain('revenuecat:event:rc-xss-1');
    const inbox = await (await consoleGet(pages[1] ?? '')).text();
    expect(inbox).toContain('&lt;script&gt;alert(&quot;t&quot;)&lt;/script&gt;');
    const event = await (await consoleGet(pages[2] ?? '')).text();
    // The raw body is shown, escaped too.
    expect(event).toContain('x&quot;&gt;&lt;img src=x onerror=alert(1)&gt;');
  });

  it('cannot be framed and allows only its own stylesheet: CSP, X-Frame-Options and nosniff on every console page', async () => {
    for (const path of ['', '/events', '/audit', '/reconcile', '/users/nobody', '/console.css']) {
      const response = await consoleGet(path);
      expect(response.status).toBe(200);
      const csp = response.headers.get('content-security-policy') ?? '';
      expect(csp).toContain("frame-ancestors 'none'");
      expect(csp).toContain("default-src 'none'");
      expect(csp).toContain("style-src 'self'");
      expect(csp).not.toContain('unsafe-inline');
      expect(response.headers.get('x-frame-options')).toBe('DENY');
      expect(response.headers.get('x-content-type-options')).toBe('nosniff');
    }
  });

  it('finds a user by a linked id or a ledger reference, an event by its provider event id, and answers 404 when nothing matches', async () => {
    stack.startWorker();
    await stack.postRevenueCat(
      revenueCatTokenPurchase({
        id: 'rc-search-1',
        userId: 'search-user',
        aliases: ['search-user', '$RCAnonymousID:abc'],
      }),
    );
    const row = await stack.finishedInboxRow('revenuecat', 'rc-search-1');
    const byAlias = await consoleGet(`/search?q=${encodeURIComponent('$RCAnonymousID:abc')}`);
    expect(byAlias.status).toBe(303);
    expect(byAlias.headers.get('location')).toBe('/admin/console/users/search-user');
    const byReference = await consoleGet(`/search?q=${encodeURIComponent('revenuecat:event:rc-search-1')}`);
    expect(byReference.headers.get('location')).toBe('/admin/console/users/search-user');
    const byEvent = await consoleGet('/search?q=rc-search-1');
    expect(byEvent.headers.get('location')).toBe(`/admin/console/events/${row.id}`);
    const nothing = await consoleGet('/search?q=nothing-like-this');
    expect(nothing.status).toBe(404);
  });

  it('refuses a cross-site console POST with Basic credentials: nothing requeued, nothing audited', async () => {
    const worker = startBrokenRevenueCatWorker(stack);
    const id = await parkTokenPurchase(stack, 'rc-csrf-1', 'csrf-user');
    worker.fix();
    const before = await auditRows();
    const crossSite: Record<string, string>[] = [
      { origin: 'https://evil.example', 'sec-fetch-site': 'cross-site' },
      { origin: `http://localhost:${stack.api.port}`, 'sec-fetch-site': 'same-site' },
      { origin: 'null' },
    ];
    for (const headers of crossSite) {
      const response = await consolePost(`/events/${id}/requeue`, headers);
      expect(response.status).toBe(403);
      expect(await readJson(response)).toMatchObject({ error: { code: 'cross_site_request' } });
    }
    const [row] = await stack.inboxRows('revenuecat', 'rc-csrf-1');
    expect(row).toMatchObject({ status: 'failed', attempts: 1 });
    expect(await auditRows()).toEqual(before);

    // The same POST from the console itself requeues, and the worker processes it.
    const response = await consolePost(
      `/events/${id}/requeue?back=${encodeURIComponent('https://evil.example/')}`,
      sameOrigin(),
    );
    expect(response.status).toBe(303);
    // `back` is only followed to a console page.
    expect(response.headers.get('location')).toBe(`/admin/console/events/${id}?notice=requeued`);
    const processed = await stack.finishedInboxRow('revenuecat', 'rc-csrf-1');
    expect(processed).toMatchObject({ status: 'processed', outcome_code: 'credited' });
    const rows = await auditRows();
    expect(rows.slice(before.length)).toEqual([
      expect.objectContaining({
        action: 'inbox.requeue',
        surface: 'console',
        target_kind: 'inbox_event',
        target_id: String(id),
        method: 'POST',
        path: `/admin/console/events/${id}/requeue`,
        key_fingerprint: fingerprint,
        actor: 'support',
        status_code: 303,
        outcome: 'ok',
        answer: { ids: [id], enqueued: 1, alreadyQueued: 0, deferred: 0 },
      }),
    ]);
  });

  it('audits admin API, dashboard and CLI actions once each, with the answer, and lists them at GET /admin/audit', async () => {
    const worker = startBrokenRevenueCatWorker(stack);
    const id = await parkTokenPurchase(stack, 'rc-audit-1', 'audit-user');
    const second = await parkTokenPurchase(stack, 'rc-audit-2', 'audit-user');
    const third = await parkTokenPurchase(stack, 'rc-audit-3', 'audit-user');
    worker.fix();
    const start = (await auditRows()).length;

    const requeue = await stack.apiRequest(`/admin/events/${id}/requeue`, { method: 'POST' });
    expect(requeue.status).toBe(200);
    await stack.finishedInboxRow('revenuecat', 'rc-audit-1');
    const again = await stack.apiRequest(`/admin/events/${id}/requeue`, { method: 'POST' });
    expect(again.status).toBe(409);
    // A read is not an action.
    expect((await stack.apiRequest(`/admin/events/${id}`)).status).toBe(200);

    // A dashboard retry of the failed job of the second event.
    await eventually('the second job to be failed', async () => {
      const job = await stack.queue.getJob(inboxJobId(second));
      return job && (await job.getState()) === 'failed';
    });
    const retry = await fetch(
      `http://127.0.0.1:${stack.api.port}/admin/queues/api/queues/inbox/${inboxJobId(second)}/retry`,
      { method: 'PUT', headers: { authorization: `Bearer ${adminKey}` } },
    );
    expect(retry.status).toBeLessThan(300);
    await stack.finishedInboxRow('revenuecat', 'rc-audit-2');

    // The CLI reaches the database directly: its rows carry no key, but its OS user.
    const cli = await runCli(['requeue', String(third), '--json'], {
      DATABASE_URL: stack.database.url,
      REDIS_URL: 'redis://127.0.0.1:6379',
      QUEUE_PREFIX: stack.prefix,
    });
    expect(cli.code).toBe(0);
    await stack.finishedInboxRow('revenuecat', 'rc-audit-3');

    const rows = (await auditRows()).slice(start);
    expect(rows).toEqual([
      expect.objectContaining({
        action: 'inbox.requeue',
        surface: 'api',
        target_kind: 'inbox_event',
        target_id: String(id),
        key_fingerprint: fingerprint,
        actor: null,
        status_code: 200,
        outcome: 'ok',
        answer: { requeued: 1, ids: [id], enqueued: 1, alreadyQueued: 0, deferred: 0 },
      }),
      expect.objectContaining({
        action: 'inbox.requeue',
        surface: 'api',
        target_id: String(id),
        status_code: 409,
        outcome: 'not_parked',
      }),
      expect.objectContaining({
        action: 'queue.retry_job',
        surface: 'dashboard',
        target_kind: 'queue_job',
        target_id: inboxJobId(second),
        path: `/admin/queues/api/queues/inbox/${inboxJobId(second)}/retry`,
        key_fingerprint: fingerprint,
        outcome: 'ok',
      }),
      expect.objectContaining({
        action: 'inbox.requeue',
        surface: 'cli',
        target_kind: 'inbox_event',
        target_id: String(third),
        key_fingerprint: null,
        method: null,
        outcome: 'ok',
        answer: expect.objectContaining({ requeued: 1, ids: [third] }),
      }),
    ]);
    expect(rows[3]?.actor).toEqual(expect.any(String));

    // GET /admin/audit: newest first, paged by cursor.
    const first = (await readJson(await stack.apiRequest('/admin/audit?limit=2'))) as Json;
    expect(first.actions.map((action: Json) => action.id)).toEqual([rows[3]?.id, rows[2]?.id]);
    expect(first.actions[0]).toMatchObject({ surface: 'cli', target: { kind: 'inbox_event', id: String(third) } });
    const next = (await readJson(await stack.apiRequest(`/admin/audit?limit=2&cursor=${first.nextCursor}`))) as Json;
    expect(next.actions.map((action: Json) => action.id)).toEqual([rows[1]?.id, rows[0]?.id]);
    const byTarget = (await readJson(
      await stack.apiRequest(`/admin/audit?targetKind=inbox_event&targetId=${id}`),
    )) as Json;
    expect(byTarget.actions.map((action: Json) => action.outcome)).toEqual(['not_parked', 'ok']);
    expect((await stack.apiRequest('/admin/audit', { key: appKey })).status).toBe(401);
    // The console lists them too.
    const page = await (await consoleGet('/audit')).text();
    expect(page).toContain('queue.retry_job');
    expect(page).toContain(fingerprint);
  });

  it('keeps admin_audit append-only: an update, a delete or a truncate is rejected by the database', async () => {
    const id = await stack.db
      .insertInto('admin_audit')
      .values({ action: 'test.row', surface: 'api', outcome: 'ok' })
      .returning('id')
      .executeTakeFirstOrThrow();
    await expect(sql`UPDATE admin_audit SET outcome = 'changed' WHERE id = ${id.id}`.execute(stack.db)).rejects.toThrow(
      /admin_audit is append-only \(UPDATE rejected\)/,
    );
    await expect(sql`DELETE FROM admin_audit WHERE id = ${id.id}`.execute(stack.db)).rejects.toThrow(
      /append-only \(DELETE rejected\)/,
    );
    await expect(sql`TRUNCATE admin_audit`.execute(stack.db)).rejects.toThrow(/append-only \(TRUNCATE rejected\)/);
    const row = await stack.db.selectFrom('admin_audit').selectAll().where('id', '=', id.id).executeTakeFirstOrThrow();
    expect(row.outcome).toBe('ok');
  });

  it('pages the ledger of a user with 10,000 entries by keyset, 50 at a time, and plots it in 200 slices after its starting point', async () => {
    const userId = 'ledger-heavy';
    await stack.db.insertInto('users').values({ id: userId }).execute();
    await stack.db.insertInto('wallets').values({ user_id: userId }).execute();
    // One statement through the ledger's own triggers (each row moves the wallet from its
    // balance_before): 10,000 credits of 1 token.
    await sql`INSERT INTO ledger_entries (user_id, reference, amount, balance_before, balance_after, reason)
      SELECT ${userId}, 'test:heavy:' || n, 1, n - 1, n, 'token_pack_purchase' FROM generate_series(1, 10000) AS n
      ORDER BY n`.execute(stack.db);
    expect(await findWallet(stack.db, userId)).toEqual({ userId, balance: 10_000 });

    const first = await (await consoleGet(`/users/${userId}`)).text();
    expect(first).toContain('<div class="value" id="balance">10000</div>');
    const references = (body: string) => [...body.matchAll(/test:heavy:(\d+)/g)].map((match) => Number(match[1]));
    expect(references(first)).toEqual(Array.from({ length: 50 }, (_, index) => 10_000 - index));
    const next = /href="([^"]+ledgerBefore=(\d+))#ledger" rel="next"/.exec(first);
    expect(next).not.toBeNull();
    const second = await (await consoleGet(`/users/${userId}?ledgerBefore=${next?.[2]}`)).text();
    expect(references(second)).toEqual(Array.from({ length: 50 }, (_, index) => 9_950 - index));
    const points = /<polyline class="line" points="([^"]+)"/.exec(first)?.[1]?.split(' ') ?? [];
    expect(points).toHaveLength(201);
  });
});
