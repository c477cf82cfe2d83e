import { createHash } from 'node:crypto';
import { findWallet, inboxJobId, linkUserIds, toWebhookId } from '@tally/billing-core';
import { sql } from 'kysely';
import { deliveringTo } from '../../support/app-webhook-worker';
import { runCli } from '../../support/built-process';
import { revenueCatTokenPurchase } from '../../support/events';
import { AppWebhookReceiver, newWebhookSecret } from '../../support/fakes/app-webhook-receiver';
import { basicAuth, parkTokenPurchase, startBrokenRevenueCatWorker } from '../../support/parked-events';
import { adminKey, appKey, eventually, type Json, readJson, TestStack } from '../../support/stack';

const fingerprint = createHash('sha256').update(adminKey).digest('hex').slice(0, 12);

describe('the console at /admin/console and the audit of admin actions', () => {
  let stack: TestStack;
  let receiver: AppWebhookReceiver;

  beforeAll(async () => {
    stack = await TestStack.start();
    receiver = await AppWebhookReceiver.start([newWebhookSecret()]);
  });
  afterAll(async () => {
    await stack.stop();
    await receiver.stop();
  });
  afterEach(async () => {
    await stack.stopWorkers();
    receiver.answers.length = 0;
    receiver.defaultAnswer = { kind: 'status', status: 204 };
  });

  /** A worker delivering app webhooks to the receiver: three attempts 50 ms apart, then failed. */
  const deliveringWorker = () =>
    stack.startWorker(deliveringTo(receiver, { roles: ['relay', 'app-webhooks'], retryScheduleMs: [50, 50] }));
  const grant = (userId: string, amount: number, tag: string) =>
    stack.postPlainEntry({ userId, reference: `test:console:${userId}:${tag}`, amount, reason: 'test_grant' });
  const messagesOf = (userId: string) =>
    stack.db.selectFrom('app_webhook_messages').selectAll().where('user_id', '=', userId).orderBy('id').execute();

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
    await stack.postRevenueCat(revenueCatTokenPurchase({ id: 'rc-search-1', userId: 'search-user' }));
    const row = await stack.finishedInboxRow('revenuecat', 'rc-search-1');
    // The anonymous id linked as a RevenueCat read would confirm it (a webhook body's aliases link nothing).
    await stack.transaction((uow) => linkUserIds(uow, ['search-user', '$RCAnonymousID:abc']));
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

  it('finds the customer whose first purchase parked (their only trace is the inbox event) and opens their support view with it', async () => {
    const worker = startBrokenRevenueCatWorker(stack);
    const id = await parkTokenPurchase(stack, 'rc-first-parked', 'first-parked-user');
    worker.fix();
    await stack.stopWorkers();
    // No wallet, no user row, no alias: Tally knows this user only from the parked event.
    expect(
      await stack.db.selectFrom('wallets').selectAll().where('user_id', '=', 'first-parked-user').execute(),
    ).toEqual([]);
    expect(await stack.db.selectFrom('users').selectAll().where('id', '=', 'first-parked-user').execute()).toEqual([]);
    expect(
      await stack.db.selectFrom('user_aliases').selectAll().where('alias', '=', 'first-parked-user').execute(),
    ).toEqual([]);

    const found = await consoleGet('/search?q=first-parked-user');
    expect(found.status).toBe(303);
    expect(found.headers.get('location')).toBe('/admin/console/users/first-parked-user');
    const page = await (await consoleGet('/users/first-parked-user')).text();
    expect(page).toContain(`/admin/console/events/${id}`);
    expect(page).toContain('rc-first-parked');
    const view = (await readJson(await stack.apiRequest('/admin/users/first-parked-user'))) as Json;
    expect(view).toMatchObject({
      userId: 'first-parked-user',
      canonicalUserId: 'first-parked-user',
      wallet: { balance: 0, createdAt: null },
      events: {
        total: 1,
        truncated: false,
        items: [
          expect.objectContaining({
            id,
            providerEventId: 'rc-first-parked',
            status: 'failed',
            attention: 'parked',
          }),
        ],
      },
      ledger: { entries: [], total: 0, sum: 0 },
    });
  });

  it('refuses a cross-site console POST with Basic credentials, and one that names no origin at all: nothing requeued, nothing audited', async () => {
    const worker = startBrokenRevenueCatWorker(stack);
    const id = await parkTokenPurchase(stack, 'rc-csrf-1', 'csrf-user');
    worker.fix();
    const before = await auditRows();
    const crossSite: Record<string, string>[] = [
      { origin: 'https://evil.example', 'sec-fetch-site': 'cross-site' },
      { origin: `http://localhost:${stack.api.port}`, 'sec-fetch-site': 'same-site' },
      { origin: 'null' },
      // Neither Origin nor Sec-Fetch-Site: nothing proves it came from the console's own page.
      {},
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
        // What the action changed, as committed with it (the queue hand-off follows the commit).
        answer: { requeued: 1, ids: [id] },
      }),
    ]);
  });

  it('audits admin API, dashboard and CLI actions once each (a dashboard action also before it runs), with the answer, and lists them at GET /admin/audit', async () => {
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
        answer: { requeued: 1, ids: [id] },
      }),
      expect.objectContaining({
        action: 'inbox.requeue',
        surface: 'api',
        target_id: String(id),
        status_code: 409,
        outcome: 'not_parked',
      }),
      // Spanning Redis and Postgres, the dashboard's action is recorded before it runs, then answered.
      expect.objectContaining({
        action: 'queue.retry_job',
        surface: 'dashboard',
        target_kind: 'queue_job',
        target_id: inboxJobId(second),
        path: `/admin/queues/api/queues/inbox/${inboxJobId(second)}/retry`,
        key_fingerprint: fingerprint,
        status_code: null,
        outcome: 'started',
        answer: null,
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
    expect(rows[4]?.actor).toEqual(expect.any(String));

    // GET /admin/audit: newest first, paged by cursor.
    const first = (await readJson(await stack.apiRequest('/admin/audit?limit=2'))) as Json;
    expect(first.actions.map((action: Json) => action.id)).toEqual([rows[4]?.id, rows[3]?.id]);
    expect(first.actions[0]).toMatchObject({ surface: 'cli', target: { kind: 'inbox_event', id: String(third) } });
    const next = (await readJson(await stack.apiRequest(`/admin/audit?limit=2&cursor=${first.nextCursor}`))) as Json;
    expect(next.actions.map((action: Json) => action.id)).toEqual([rows[2]?.id, rows[1]?.id]);
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

  it('runs no queue dashboard action when its audit row cannot be written: 503, the job still failed, its event still parked', async () => {
    const worker = startBrokenRevenueCatWorker(stack);
    const id = await parkTokenPurchase(stack, 'rc-dashboard-audit', 'dashboard-audit-user');
    worker.fix();
    await eventually('the job to be failed', async () => {
      const job = await stack.queue.getJob(inboxJobId(id));
      return job && (await job.getState()) === 'failed';
    });
    const retryOne = `http://127.0.0.1:${stack.api.port}/admin/queues/api/queues/inbox/${inboxJobId(id)}/retry`;
    // In this test's own database: every audit row refused.
    await sql`CREATE FUNCTION test_refuse_every_audit() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN RAISE EXCEPTION 'audit row refused'; END; $$`.execute(stack.db);
    await sql`CREATE TRIGGER test_refuse_every_audit_trg BEFORE INSERT ON admin_audit
      FOR EACH ROW EXECUTE FUNCTION test_refuse_every_audit()`.execute(stack.db);
    let auditBefore: Awaited<ReturnType<typeof auditRows>>;
    try {
      auditBefore = await auditRows();
      const parked = await stack.inboxRow('revenuecat', 'rc-dashboard-audit');
      const refused = [
        await fetch(retryOne, { method: 'PUT', headers: { authorization: `Bearer ${adminKey}` } }),
        await fetch(`http://127.0.0.1:${stack.api.port}/admin/queues/api/queues/inbox/retry/failed`, {
          method: 'PUT',
          headers: { authorization: basicAuth('ops', adminKey), ...sameOrigin() },
        }),
      ];
      for (const response of refused) {
        expect({ status: response.status, body: await readJson(response) }).toEqual({
          status: 503,
          body: { error: { code: 'audit_unavailable', message: expect.any(String) } },
        });
      }
      // Nothing ran: the job is still failed, the row still parked and untouched (no reset), no audit row.
      expect(await (await stack.queue.getJob(inboxJobId(id)))?.getState()).toBe('failed');
      expect(await stack.inboxRow('revenuecat', 'rc-dashboard-audit')).toEqual(parked);
      expect(await auditRows()).toEqual(auditBefore);
    } finally {
      await sql`DROP TRIGGER test_refuse_every_audit_trg ON admin_audit`.execute(stack.db);
      await sql`DROP FUNCTION test_refuse_every_audit()`.execute(stack.db);
    }
    // Once rows can be written, the same retry runs, recorded before it ran and with its answer.
    expect(
      (await fetch(retryOne, { method: 'PUT', headers: { authorization: `Bearer ${adminKey}` } })).status,
    ).toBeLessThan(300);
    expect(await stack.finishedInboxRow('revenuecat', 'rc-dashboard-audit')).toMatchObject({
      status: 'processed',
      outcome_code: 'credited',
    });
    expect((await auditRows()).slice(auditBefore.length)).toEqual([
      expect.objectContaining({ action: 'queue.retry_job', target_id: inboxJobId(id), outcome: 'started' }),
      expect.objectContaining({ action: 'queue.retry_job', target_id: inboxJobId(id), outcome: 'ok' }),
    ]);
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

  it('shows app-webhook messages on the user page and their own pages (filters, paging, body, attempts); Redeliver from the console delivers a failed one, audited', async () => {
    const userId = 'console-msg-user';
    receiver.defaultAnswer = { kind: 'status', status: 500, body: 'boom <b>down</b>' };
    deliveringWorker();
    await grant(userId, 5, 'one');
    await grant(userId, 7, 'two');
    await grant(userId, 9, 'three');
    const failed = await eventually(
      'the three messages to fail for good',
      async () => {
        const rows = await messagesOf(userId);
        return rows.length === 3 && rows.every((row) => row.status === 'failed') ? rows : undefined;
      },
      20_000,
    );
    const ids = failed.map((row) => toWebhookId(row.message_id));
    const [first] = ids;

    // The user page lists them newest first, with status, attempts and the last answer, escaped.
    const user = await (await consoleGet(`/users/${userId}`)).text();
    const listed = (body: string) => [...body.matchAll(/>(msg_[0-9a-f]{32})</g)].map((match) => match[1]);
    expect(listed(user)).toEqual([...ids].reverse());
    expect(user).toContain('HTTP 500: boom &lt;b&gt;down&lt;/b&gt;');
    expect(user).not.toContain('<b>down');
    expect(user).toContain(`aria-label="Redeliver ${first}"`);

    // The messages page filters by status, type and user; a filter it does not know is a 400.
    const byUser = await (await consoleGet(`/app-webhooks?status=failed&userId=${userId}`)).text();
    expect(listed(byUser)).toEqual([...ids].reverse());
    const debits = await (await consoleGet(`/app-webhooks?type=wallet.debited&userId=${userId}`)).text();
    expect(listed(debits)).toEqual([]);
    expect((await consoleGet('/app-webhooks?type=wallet.bogus')).status).toBe(400);
    expect((await consoleGet('/app-webhooks/not-a-message')).status).toBe(400);
    expect((await consoleGet(`/app-webhooks/msg_${'0'.repeat(32)}`)).status).toBe(404);

    // One message: its attempts, the last answer and the body exactly as sent.
    const detail = await (await consoleGet(`/app-webhooks/${first}`)).text();
    expect(detail).toContain('<dt>Attempts</dt><dd>3 in its current schedule');
    expect(detail).toContain('HTTP <code>500</code>');
    expect(detail).toContain('&quot;reference&quot;: &quot;test:console:console-msg-user:one&quot;');
    const sent = receiver.deliveries.filter((delivery) => delivery.webhookId === first);
    expect(sent).toHaveLength(3);

    // Another site cannot redeliver; the console can, and the receiver gets it under the same id.
    const crossSite = await consolePost(`/app-webhooks/${first}/redeliver`, {
      origin: 'https://evil.example',
      'sec-fetch-site': 'cross-site',
    });
    expect(crossSite.status).toBe(403);
    expect((await messagesOf(userId))[0]).toMatchObject({ status: 'failed', attempts: 3 });
    const before = (await auditRows()).length;
    receiver.defaultAnswer = { kind: 'status', status: 204 };
    const redeliver = await consolePost(
      `/app-webhooks/${first}/redeliver?back=${encodeURIComponent(`/admin/console/users/${userId}`)}`,
      sameOrigin(),
    );
    expect(redeliver.status).toBe(303);
    expect(redeliver.headers.get('location')).toBe(`/admin/console/users/${userId}?notice=redelivered`);
    await eventually('the redelivered message to be delivered', async () => {
      const [row] = await messagesOf(userId);
      return row?.status === 'delivered' ? row : undefined;
    });
    expect(
      receiver.accepted.filter((delivery) => delivery.body.data.userId === userId).map((d) => d.webhookId),
    ).toEqual([first]);
    expect((await auditRows()).slice(before)).toEqual([
      expect.objectContaining({
        action: 'app_webhook.redeliver',
        surface: 'console',
        target_kind: 'app_webhook_message',
        target_id: first,
        actor: 'support',
        key_fingerprint: fingerprint,
        status_code: 303,
        outcome: 'ok',
        answer: expect.objectContaining({ redelivered: 1, message: expect.objectContaining({ id: first }) }),
      }),
    ]);
    const shown = await (await consoleGet(`/app-webhooks/${first}`)).text();
    expect(shown).toContain('app_webhook.redeliver');
    expect(shown).toContain('<span class="status-delivered">delivered</span>');

    // The overview counts the failed messages (every user's: earlier tests' messages were pending
    // too) with the metrics' query, and charts the last 24 hours from the rows' timestamps.
    const count = async (status: 'failed' | 'delivered') =>
      Number(
        (
          await stack.db
            .selectFrom('app_webhook_messages')
            .select((eb) => eb.fn.countAll().as('n'))
            .where('status', '=', status)
            .executeTakeFirstOrThrow()
        ).n,
      );
    const [failedNow, deliveredNow] = [await count('failed'), await count('delivered')];
    expect(failedNow).toBeGreaterThanOrEqual(2);
    const overview = await (await consoleGet('')).text();
    expect(overview).toContain(
      `<div class="value"><a href="/admin/console/app-webhooks?status=failed">${failedNow}</a></div><div class="label">failed app-webhook messages`,
    );
    expect(overview).toContain(`aria-label="app-webhook messages delivered: ${deliveredNow} in the last 24 h`);
    expect(overview).toContain(`aria-label="app-webhook messages failed (still failed): ${failedNow} in the last 24 h`);

    // A pending message is not redelivered: the refusal is answered and audited.
    await stack.stopWorkers();
    const manyUser = 'console-msg-many';
    for (let i = 0; i < 51; i += 1) await grant(manyUser, 1, `m${i}`);
    const pending = (await messagesOf(manyUser)).map((row) => toWebhookId(row.message_id));
    const refused = await consolePost(`/app-webhooks/${pending[0]}/redeliver`, sameOrigin());
    expect(refused.headers.get('location')).toBe(
      `/admin/console/app-webhooks/${pending[0]}?notice=message_not_finished`,
    );
    expect((await auditRows()).at(-1)).toMatchObject({
      action: 'app_webhook.redeliver',
      target_id: pending[0],
      outcome: 'not_finished',
    });
    // 50 a page, newest first, then the rest by keyset.
    const page1 = await (await consoleGet(`/app-webhooks?userId=${manyUser}`)).text();
    expect(listed(page1)).toEqual(pending.slice(1).reverse());
    const older = /<a rel="next" href="([^"]+)">Older<\/a>/.exec(page1)?.[1]?.replaceAll('&amp;', '&');
    expect(older).toBeDefined();
    const page2 = await (await consoleGet(older?.replace('/admin/console', '') ?? '')).text();
    expect(listed(page2)).toEqual([pending[0]]);
  });

  it('commits each requeue, replay and redeliver with its audit row: when the row cannot be written, nothing is done', async () => {
    // In this test's own database: a trigger refusing audit rows about the targets listed here.
    await sql`CREATE TABLE test_audit_refused (target_id text PRIMARY KEY)`.execute(stack.db);
    await sql`CREATE FUNCTION test_refuse_audit() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN
        IF EXISTS (SELECT 1 FROM test_audit_refused WHERE target_id = NEW.target_id) THEN
          RAISE EXCEPTION 'audit row refused for %', NEW.target_id;
        END IF;
        RETURN NEW;
      END $$`.execute(stack.db);
    await sql`CREATE TRIGGER test_refuse_audit_trg BEFORE INSERT ON admin_audit
      FOR EACH ROW EXECUTE FUNCTION test_refuse_audit()`.execute(stack.db);
    const refuse = (target: string | number) =>
      sql`INSERT INTO test_audit_refused VALUES (${String(target)})`.execute(stack.db);
    try {
      const worker = startBrokenRevenueCatWorker(stack);
      const parked = await parkTokenPurchase(stack, 'rc-atomic-parked', 'atomic-user');
      worker.fix();
      await stack.postRevenueCat(revenueCatTokenPurchase({ id: 'rc-atomic-done', userId: 'atomic-user' }));
      const done = await stack.finishedInboxRow('revenuecat', 'rc-atomic-done');
      await stack.stopWorkers();
      deliveringWorker();
      await grant('atomic-user', 3, 'message');
      const message = await eventually('the message to be delivered', async () => {
        const row = (await messagesOf('atomic-user')).at(-1);
        return row?.status === 'delivered' ? row : undefined;
      });
      const messageId = toWebhookId(message.message_id);
      await stack.stopWorkers();
      for (const target of [parked, done.id, messageId]) await refuse(target);
      const auditBefore = await auditRows();

      const attempts = [
        await stack.apiRequest(`/admin/events/${parked}/requeue`, { method: 'POST' }),
        await consolePost(`/events/${parked}/requeue`, sameOrigin()),
        await stack.apiRequest(`/admin/events/${done.id}/replay`, { method: 'POST' }),
        await consolePost(`/events/${done.id}/replay`, sameOrigin()),
        await stack.apiRequest(`/admin/app-webhooks/messages/${messageId}/redeliver`, { method: 'POST' }),
        await consolePost(`/app-webhooks/${messageId}/redeliver`, sameOrigin()),
      ];
      expect(attempts.map((response) => response.status)).toEqual([500, 500, 500, 500, 500, 500]);
      const cli = await runCli(['requeue', String(parked), '--json'], {
        DATABASE_URL: stack.database.url,
        REDIS_URL: 'redis://127.0.0.1:6379',
        QUEUE_PREFIX: stack.prefix,
      });
      expect(cli.code).not.toBe(0);
      const cliRedeliver = await runCli(['app-webhooks', 'redeliver', messageId, '--json'], {
        DATABASE_URL: stack.database.url,
        REDIS_URL: 'redis://127.0.0.1:6379',
        QUEUE_PREFIX: stack.prefix,
      });
      expect(cliRedeliver.code).not.toBe(0);

      // Nothing was done, and no row claims it was.
      expect(await stack.inboxRow('revenuecat', 'rc-atomic-parked')).toMatchObject({ status: 'failed', attempts: 1 });
      expect(await stack.inboxRow('revenuecat', 'rc-atomic-done')).toMatchObject({ status: 'processed', replays: 0 });
      expect((await messagesOf('atomic-user')).at(-1)).toMatchObject({ status: 'delivered', attempts: 1 });
      expect(await auditRows()).toEqual(auditBefore);

      // Once the row can be written, the same requeue is done and recorded once.
      await sql`DELETE FROM test_audit_refused`.execute(stack.db);
      expect((await stack.apiRequest(`/admin/events/${parked}/requeue`, { method: 'POST' })).status).toBe(200);
      expect(await stack.inboxRow('revenuecat', 'rc-atomic-parked')).toMatchObject({ status: 'received' });
      expect((await auditRows()).slice(auditBefore.length)).toEqual([
        expect.objectContaining({ action: 'inbox.requeue', target_id: String(parked), outcome: 'ok' }),
      ]);
    } finally {
      await sql`DROP TRIGGER test_refuse_audit_trg ON admin_audit`.execute(stack.db);
      await sql`DROP FUNCTION test_refuse_audit()`.execute(stack.db);
      await sql`DROP TABLE test_audit_refused`.execute(stack.db);
    }
  });
  it('shows balance, held and available and the holds on the user page; Release ends an active hold (same-origin POST, audited, a repeat changes nothing), a captured hold has no button', async () => {
    const userId = 'console-holds-user';
    await grant(userId, 100, 'holds');
    const place = async (amount: number, reference: string) => {
      const placed = await stack.apiRequest(`/v1/users/${userId}/holds`, {
        method: 'POST',
        body: { amount, reference, expiresInSeconds: 600 },
      });
      expect(placed.status).toBe(201);
      return (await readJson(placed)).id as string;
    };
    const active = await place(30, 'console-job-1');
    const captured = await place(10, 'console-job-2');
    expect(
      (await stack.apiRequest(`/v1/users/${userId}/holds/${captured}/capture`, { method: 'POST', body: {} })).status,
    ).toBe(200);
    const pageOf = async () => {
      const response = await consoleGet(`/users/${userId}`);
      expect(response.status).toBe(200);
      return response.text();
    };
    const before = await pageOf();
    expect(before).toContain('<div class="value" id="balance">90</div>');
    expect(before).toContain('<div class="value" id="held">30</div>');
    expect(before).toContain('<div class="value" id="available">60</div>');
    expect(before).toContain(`action="/admin/console/users/${userId}/holds/${active}/release"`);
    expect(before).not.toContain(`/holds/${captured}/release`);
    expect(before).toContain('console-job-2');

    const cross = await consolePost(`/users/${userId}/holds/${active}/release`, {
      origin: 'https://evil.example',
      'sec-fetch-site': 'cross-site',
    });
    expect(cross.status).toBe(403);
    const released = await consolePost(`/users/${userId}/holds/${active}/release`, sameOrigin());
    expect({ status: released.status, location: released.headers.get('location') }).toEqual({
      status: 303,
      location: `/admin/console/users/${userId}?notice=hold_released#holds`,
    });
    const again = await consolePost(`/users/${userId}/holds/${active}/release`, sameOrigin());
    expect(again.headers.get('location')).toBe(`/admin/console/users/${userId}?notice=hold_already_released#holds`);
    const notActive = await consolePost(`/users/${userId}/holds/${captured}/release`, sameOrigin());
    expect(notActive.headers.get('location')).toBe(`/admin/console/users/${userId}?notice=hold_not_active#holds`);
    const after = await pageOf();
    expect(after).toContain('<div class="value" id="held">0</div>');
    expect(after).toContain('<div class="value" id="available">90</div>');
    expect(after).not.toContain(`/holds/${active}/release`);
    expect(
      await stack.db
        .selectFrom('holds')
        .select(['id', 'status'])
        .where('user_id', '=', userId)
        .orderBy('created_at')
        .execute(),
    ).toEqual([
      { id: active, status: 'released' },
      { id: captured, status: 'captured' },
    ]);
    expect((await findWallet(stack.db, userId)).balance).toBe(90);
    const rows = (await auditRows()).filter((row) => row.target_id === active || row.target_id === captured);
    expect(
      rows.map((row) => [row.action, row.surface, row.target_kind, row.target_id, row.status_code, row.outcome]),
    ).toEqual([
      ['hold.release', 'console', 'hold', active, 303, 'ok'],
      ['hold.release', 'console', 'hold', active, 303, 'ok'],
      ['hold.release', 'console', 'hold', captured, 303, 'hold_not_active'],
    ]);
  });
});

describe('app-webhook messages without APP_WEBHOOK_URL: shown as not configured, not as a growing backlog', () => {
  const stacks: Record<'on' | 'not_configured', TestStack | undefined> = { on: undefined, not_configured: undefined };
  beforeAll(async () => {
    stacks.on = await TestStack.start();
    stacks.not_configured = await TestStack.start({ appWebhookDelivery: 'not_configured' });
  });
  afterAll(async () => {
    await stacks.on?.stop();
    await stacks.not_configured?.stop();
  });

  /** What each surface shows of one pending message (a grant's wallet.credited) under this configuration. */
  async function surfacesOf(delivery: 'on' | 'not_configured') {
    const stack = stacks[delivery];
    if (!stack) throw new Error('no stack');
    const userId = `unconfigured-${delivery}`;
    const granted = await stack.apiRequest(`/v1/users/${userId}/grants`, {
      method: 'POST',
      body: { amount: 5, reference: `g-${delivery}` },
    });
    expect(granted.status).toBe(201);
    const list = await readJson(await stack.apiRequest(`/admin/app-webhooks/messages?userId=${userId}`));
    expect(list.messages).toEqual([expect.objectContaining({ type: 'wallet.credited', status: 'pending' })]);
    const id = list.messages[0].id as string;
    const one = await readJson(await stack.apiRequest(`/admin/app-webhooks/messages/${id}`));
    const page = async (pathname: string) => {
      const response = await fetch(`http://127.0.0.1:${stack.api.port}${pathname}`, {
        headers: { authorization: basicAuth('ops', adminKey) },
      });
      expect({ pathname, status: response.status }).toEqual({ pathname, status: 200 });
      return response.text();
    };
    const queues = JSON.parse(await page('/admin/queues/api/queues')) as {
      queues: { name: string; description: string }[];
    };
    return {
      api: { list: list.delivery, one: one.delivery, status: one.status },
      overview: await page('/admin/console'),
      messages: await page(`/admin/console/app-webhooks?userId=${userId}`),
      message: await page(`/admin/console/app-webhooks/${id}`),
      user: await page(`/admin/console/users/${userId}`),
      dashboard: queues.queues.find((queue) => queue.name === 'app-webhooks')?.description,
    };
  }

  it('the console, the admin API and the queue dashboard say the messages are not delivered for want of APP_WEBHOOK_URL', async () => {
    const shown = await surfacesOf('not_configured');
    // The admin API keeps the status the database holds and says why nothing moves.
    expect(shown.api).toEqual({ list: 'not_configured', one: 'not_configured', status: 'pending' });
    for (const [page, text] of Object.entries({
      messages: shown.messages,
      message: shown.message,
      overview: shown.overview,
    })) {
      expect({ page, banner: text.includes('id="delivery-not-configured"') }).toEqual({ page, banner: true });
    }
    for (const text of [shown.messages, shown.message, shown.user]) {
      expect(text).toContain('>not configured</span>');
      expect(text).not.toContain('class="status-pending"');
    }
    expect(shown.messages).toContain('waits for APP_WEBHOOK_URL');
    // No growing "oldest pending" age on the overview: the count says why.
    expect(shown.overview).toContain('app-webhook messages not delivered: APP_WEBHOOK_URL is not set');
    expect(shown.overview).not.toContain('oldest pending message');
    expect(shown.dashboard).toMatch(/^not delivered: APP_WEBHOOK_URL is not set/);
  });

  it('with APP_WEBHOOK_URL the same message is pending, with its age, and no banner', async () => {
    const shown = await surfacesOf('on');
    expect(shown.api).toEqual({ list: 'on', one: 'on', status: 'pending' });
    for (const text of [shown.messages, shown.message, shown.overview, shown.user]) {
      expect(text).not.toContain('delivery-not-configured');
      expect(text).not.toContain('>not configured</span>');
    }
    expect(shown.messages).toContain('class="status-pending"');
    expect(shown.overview).toContain('oldest pending message');
    // Nothing parked and no studio request yet: each section says "None" once.
    expect(shown.overview.match(/>None[^<]*<\/p>/g)).toEqual(['>None parked.</p>', '>None.</p>']);
    expect(shown.dashboard).not.toContain('APP_WEBHOOK_URL');
  });
});
