import { createTestDatabase, type TestDatabase, testRedisUrl, uniqueQueuePrefix } from '@tally/billing-core/testing';
import { auditOf } from '../../support/audit';
import { RunningProcess, runCli } from '../../support/built-process';
import { basicAuth } from '../../support/parked-events';
import { answerOf, grantOverApi, postAnswer } from '../../support/requests';
import { adminKey, type Json } from '../../support/stack';
import { stripeId } from '../../support/stripe-events';
import { suiteStack } from '../../support/suite';

jest.setTimeout(120_000);

/**
 * Support's surfaces of the spend limits (docs/spend-limits.md): the admin API's GET and audited
 * PUT, the console's form on the user page (audited), `tally limits` (audited, surface cli), and
 * the defaults read from the environment by the built api.
 */
describe('spend limits on the admin API, the console and the CLI', () => {
  const stack = suiteStack({ spendLimits: { daily: null, monthly: 500 } });

  const adminPut = (userId: string, body: Json) =>
    stack.apiRequest(`/admin/users/${userId}/limits`, { method: 'PUT', body }).then(answerOf);
  const audits = () => auditOf(stack.db, { action: 'spend_limits.set' });

  it('support reads and sets them on the admin API, each set audited with its answer; a bad body is a 400, audited too', async () => {
    const userId = stripeId('user');
    await grantOverApi(stack, userId, 100);
    expect((await postAnswer(stack, `/v1/users/${userId}/debits`, { amount: 7, reference: 'a' })).status).toBe(201);
    const before = await audits();
    const set = await adminPut(userId, { daily: 40 });
    expect(set).toEqual({
      status: 200,
      body: {
        userId,
        held: 0,
        daily: { limit: 40, source: 'user', spent: 7, resetsAt: expect.any(String) },
        monthly: { limit: 500, source: 'default', spent: 7, resetsAt: expect.any(String) },
      },
    });
    expect((await stack.apiRequest(`/admin/users/${userId}/limits`).then(answerOf)).body).toEqual(set.body);
    expect((await stack.apiRequest(`/v1/users/${userId}/limits`).then(answerOf)).body).toEqual(set.body);
    expect(await adminPut(userId, { daily: 'lots' })).toMatchObject({
      status: 400,
      body: { error: { code: 'invalid_request' } },
    });
    expect((await audits()).slice(before.length)).toEqual([
      {
        action: 'spend_limits.set',
        surface: 'api',
        target_kind: 'user',
        target_id: userId,
        status_code: 200,
        outcome: 'ok',
      },
      expect.objectContaining({ surface: 'api', target_id: userId, status_code: 400, outcome: 'invalid_request' }),
    ]);
  });

  it('the console shows them on the user page and its form sets them (same-origin POST, audited; empty: the default)', async () => {
    const userId = stripeId('user');
    await grantOverApi(stack, userId, 100);
    const base = `http://127.0.0.1:${stack.api.port}/admin/console`;
    const page = await (
      await fetch(`${base}/users/${userId}`, { headers: { authorization: basicAuth('s', adminKey) } })
    ).text();
    expect(page).toContain('<h2 id="limits">Spend limits</h2>');
    expect(page).toContain(`action="/admin/console/users/${userId}/limits"`);
    const sameOrigin = { origin: `http://127.0.0.1:${stack.api.port}`, 'sec-fetch-site': 'same-origin' };
    const submit = (form: string, from: Record<string, string> = sameOrigin) =>
      fetch(`${base}/users/${userId}/limits`, {
        method: 'POST',
        redirect: 'manual',
        headers: {
          authorization: basicAuth('s', adminKey),
          ...from,
          'content-type': 'application/x-www-form-urlencoded',
        },
        body: form,
      });
    const before = await audits();
    const saved = await submit('daily=25&monthly=');
    expect({ status: saved.status, location: saved.headers.get('location') }).toEqual({
      status: 303,
      location: `/admin/console/users/${userId}?notice=limits_set#limits`,
    });
    expect((await stack.apiRequest(`/v1/users/${userId}/limits`).then(answerOf)).body).toMatchObject({
      daily: { limit: 25, source: 'user' },
      monthly: { limit: 500, source: 'default' },
    });
    const shown = await (
      await fetch(`${base}/users/${userId}`, { headers: { authorization: basicAuth('s', adminKey) } })
    ).text();
    expect(shown).toContain('value="25"');
    const bad = await submit('daily=-3&monthly=');
    expect(bad.headers.get('location')).toBe(`/admin/console/users/${userId}?notice=invalid_limits#limits`);
    expect((await submit('daily=1', { origin: 'https://evil.example', 'sec-fetch-site': 'cross-site' })).status).toBe(
      403,
    );
    expect((await stack.apiRequest(`/v1/users/${userId}/limits`).then(answerOf)).body).toMatchObject({
      daily: { limit: 25 },
    });
    expect((await audits()).slice(before.length).map((row) => [row.surface, row.target_id, row.outcome])).toEqual([
      ['console', userId, 'ok'],
      ['console', userId, 'invalid_request'],
    ]);
  });

  it('tally limits shows them and sets them (audited, surface cli); "default" removes the own limit', async () => {
    const env = { DATABASE_URL: stack.database.url, SPEND_LIMIT_MONTHLY: '500' };
    const userId = stripeId('user');
    await grantOverApi(stack, userId, 100);
    const set = await runCli(['limits', userId, '--daily', '60', '--note', 'ticket 7', '--json'], env);
    expect({ code: set.code, stderr: set.stderr }).toEqual({ code: 0, stderr: '' });
    expect(JSON.parse(set.stdout)).toMatchObject({
      userId,
      daily: { limit: 60, source: 'user', spent: 0 },
      monthly: { limit: 500, source: 'default' },
    });
    const text = await runCli(['limits', userId], env);
    expect(text.stdout).toContain(`spend limits of ${userId}`);
    expect(text.stdout).toMatch(/daily\s+limit 60 \(user\), spent 0, resets \d{4}-\d\d-\d\dT00:00:00.000Z/);
    const removed = await runCli(['limits', userId, '--daily', 'default', '--json'], env);
    expect(JSON.parse(removed.stdout).daily).toMatchObject({ limit: null, source: 'none' });
    expect((await runCli(['limits', userId, '--daily', '-1'], env)).code).toBe(2);
    expect(
      (await auditOf(stack.db, { targetIds: [userId] })).map((row) => [row.action, row.surface, row.outcome]),
    ).toEqual([
      ['spend_limits.set', 'cli', 'ok'],
      ['spend_limits.set', 'cli', 'ok'],
    ]);
  });
});

describe('spend limit defaults from the environment of the built api', () => {
  let database: TestDatabase;
  let api: RunningProcess;
  let url: string;
  const appKey = 'app_limits_key';

  beforeAll(async () => {
    database = await createTestDatabase();
    api = new RunningProcess('api', {
      DATABASE_URL: database.url,
      REDIS_URL: testRedisUrl(),
      QUEUE_PREFIX: uniqueQueuePrefix(),
      API_PORT: '0',
      APP_API_KEYS: appKey,
      ADMIN_API_KEYS: 'admin_limits_key',
      SPEND_LIMIT_DAILY: '50',
      SPEND_LIMIT_MONTHLY: '',
      LOG_LEVEL: 'info',
    });
    const { port } = await api.waitForLog('api listening');
    url = `http://127.0.0.1:${Number(port)}`;
  });
  afterAll(async () => {
    await api?.stop();
    await database?.drop();
  });

  const call = async (method: string, path: string, body?: Json) => {
    const response = await fetch(`${url}${path}`, {
      method,
      headers: { authorization: `Bearer ${appKey}`, ...(body ? { 'content-type': 'application/json' } : {}) },
      ...(body ? { body: JSON.stringify(body) } : {}),
    });
    return { status: response.status, body: (await response.json()) as Json };
  };

  it('SPEND_LIMIT_DAILY limits a user without their own; an empty SPEND_LIMIT_MONTHLY is no limit', async () => {
    const userId = stripeId('user');
    expect((await call('POST', `/v1/users/${userId}/grants`, { amount: 200, reference: 'g' })).status).toBe(201);
    expect((await call('GET', `/v1/users/${userId}/limits`)).body).toMatchObject({
      daily: { limit: 50, source: 'default' },
      monthly: { limit: null, source: 'none' },
    });
    expect((await call('POST', `/v1/users/${userId}/debits`, { amount: 45, reference: 'd-1' })).status).toBe(201);
    expect(await call('POST', `/v1/users/${userId}/debits`, { amount: 10, reference: 'd-2' })).toMatchObject({
      status: 402,
      body: { error: { code: 'spend_limit_reached' }, period: 'daily', limit: 50, spent: 45, requested: 10 },
    });
  });

  it('a SPEND_LIMIT_DAILY that is not a whole number of tokens stops the api at start, saying so', async () => {
    const bad = new RunningProcess('api', {
      DATABASE_URL: database.url,
      API_PORT: '0',
      APP_API_KEYS: appKey,
      ADMIN_API_KEYS: 'admin_limits_key',
      SPEND_LIMIT_DAILY: '-5',
    });
    const exited = await bad.exited;
    expect(exited.code).toBe(1);
    expect(bad.output).toContain('SPEND_LIMIT_DAILY: must be a whole number of tokens, 0 or more');
  });
});
