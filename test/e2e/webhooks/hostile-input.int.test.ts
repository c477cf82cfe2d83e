import { execFile } from 'node:child_process';
import { createHmac } from 'node:crypto';
import { gzipSync } from 'node:zlib';
import { createLogger, type RunningServer, startHttpServer } from '@tally/platform';
import { createIngestApp } from '../../../apps/ingest/src/app';
import { createInboxBatcher } from '../../../apps/ingest/src/inbox-batcher';
import { createIngestMetrics } from '../../../apps/ingest/src/ingest-metrics';
import { revenueCatTokenPurchase, stripeTokenPackPayment } from '../../support/events';
import { ledgerOf } from '../../support/ledger';
import {
  defaultIngestBatching,
  eventually,
  revenueCatAuth,
  signStripe,
  stripeSecret,
  TestStack,
} from '../../support/stack';

/**
 * POSTs `count` copies of a forged Stripe webhook to 127.0.0.1:`port`, `concurrency` at a time,
 * from a child Node process; resolves with the statuses.
 */
function floodFromChild(port: number, body: string, signature: string, count: number, concurrency: number) {
  const script = `
    const [port, body, signature, count, concurrency] = JSON.parse(process.argv[1]);
    const statuses = [];
    let next = 0;
    const one = async () => {
      while (next < count) {
        next += 1;
        try {
          const response = await fetch('http://127.0.0.1:' + port + '/webhooks/stripe', {
            method: 'POST',
            headers: { 'content-type': 'application/json', 'stripe-signature': signature },
            body,
          });
          await response.text();
          statuses.push(response.status);
        } catch {
          statuses.push(0);
        }
      }
    };
    Promise.all(Array.from({ length: concurrency }, one)).then(() => process.stdout.write(JSON.stringify(statuses)));
  `;
  return new Promise<number[]>((resolve, reject) => {
    execFile(
      process.execPath,
      ['-e', script, JSON.stringify([port, body, signature, count, concurrency])],
      { timeout: 120_000, maxBuffer: 1024 * 1024 },
      (error, stdout) => (error ? reject(error) : resolve(JSON.parse(stdout) as number[])),
    );
  });
}

/**
 * Hostile input that the other webhook tests do not cover: every Stripe-Signature variant over
 * HTTP, RevenueCat authorization variants, compressed and deeply nested bodies, `__proto__`
 * keys, invalid UTF-8, SQL in JSON fields, and the failed-authentication rate limiter.
 */
describe('hostile input', () => {
  let stack: TestStack;
  let limited: RunningServer;
  const limit = 5;

  beforeAll(async () => {
    stack = await TestStack.start();
    // An ingest app of its own with the failed-authentication limiter on (TestStack's is off).
    limited = await startHttpServer(
      createIngestApp({
        inbox: createInboxBatcher({
          ...defaultIngestBatching,
          db: stack.db,
          enqueueMany: async () => undefined,
          logger: createLogger({ name: 'test', level: 'silent' }),
        }),
        logger: createLogger({ name: 'test', level: 'silent' }),
        metrics: createIngestMetrics(),
        stripeWebhookSecrets: [stripeSecret],
        stripeToleranceSeconds: 300,
        revenueCatAuthorizations: [revenueCatAuth],
        bodyLimitBytes: 64 * 1024,
        readiness: {},
        failedAuthLimit: { limit, windowMs: 60_000 },
      }),
      0,
      { host: '127.0.0.1' },
    );
  });
  afterAll(async () => {
    await limited?.close();
    await stack.stop();
  });

  const inboxCount = async () =>
    Number(
      (
        await stack.db
          .selectFrom('inbox_events')
          .select((eb) => eb.fn.countAll<number>().as('count'))
          .executeTakeFirstOrThrow()
      ).count,
    );
  const v1 = (payload: string, secret: string, t: number) =>
    createHmac('sha256', secret).update(`${t}.${payload}`).digest('hex');
  const post = (port: number, path: string, body: string | Buffer, headers: Record<string, string>) =>
    fetch(`http://127.0.0.1:${port}${path}`, { method: 'POST', headers, body });

  it('refuses every forged or malformed Stripe-Signature over HTTP and stores nothing', async () => {
    const body = stripeTokenPackPayment({ eventId: 'evt_hostile_sig', userId: 'hostile-sig-user' });
    const now = Math.floor(Date.now() / 1000);
    const good = v1(body, stripeSecret, now);
    const reserialised = JSON.stringify(JSON.parse(body), null, 2);
    const cases: [string, string, string | null][] = [
      ['no header', body, null],
      ['wrong secret', body, `t=${now},v1=${v1(body, 'whsec_wrong', now)}`],
      // stripe-node checks the HMAC against the last `t=`, the skew check would read the first:
      // a current `t=` in front of a future-dated, genuinely signed one is refused only by the
      // one-timestamp rule in verify-stripe-signature.ts.
      ['two t= values', body, `t=${now},t=${now + 3600},v1=${v1(body, stripeSecret, now + 3600)}`],
      ['tampered body', body.replace('"amount":499', '"amount":999'), `t=${now},v1=${good}`],
      ['v0 only', body, `t=${now},v0=${good}`],
      ['several v1, none valid', body, `t=${now},v1=${'0'.repeat(64)},v1=${v1(body, 'whsec_x', now)}`],
      ['stale timestamp', body, `t=${now - 3600},v1=${v1(body, stripeSecret, now - 3600)}`],
      ['future timestamp', body, `t=${now + 3600},v1=${v1(body, stripeSecret, now + 3600)}`],
      ['re-serialised body', reserialised, `t=${now},v1=${good}`],
      ['signature of the empty string', body, `t=${now},v1=${v1('', stripeSecret, now)}`],
      ['garbage header', body, 'not a signature'],
    ];
    const before = await inboxCount();
    const answers: Record<string, number> = {};
    for (const [name, payload, signature] of cases) {
      answers[name] = (await stack.postStripe(payload, signature)).status;
    }
    expect(answers).toEqual(Object.fromEntries(cases.map(([name]) => [name, 400])));
    expect(await inboxCount()).toBe(before);
    // The genuine one still passes.
    expect((await stack.postStripe(body, signStripe(body))).status).toBe(200);
  });

  it('refuses RevenueCat authorization variants with 401 and stores nothing', async () => {
    const body = revenueCatTokenPurchase({ id: 'rc-hostile-auth', userId: 'hostile-auth-user' });
    const secret = revenueCatAuth.replace('Bearer ', '');
    const variants = [
      null,
      '',
      'Bearer',
      secret,
      `bearer ${secret}`,
      `Bearer  ${secret}`,
      `${revenueCatAuth},${revenueCatAuth}`,
      `Basic ${Buffer.from(`x:${secret}`).toString('base64')}`,
      `Bearer ${secret.slice(0, -1)}`,
    ];
    const before = await inboxCount();
    const statuses = [];
    for (const authorization of variants) statuses.push((await stack.postRevenueCat(body, authorization)).status);
    expect(statuses).toEqual(variants.map(() => 401));
    expect(await inboxCount()).toBe(before);
  });

  it('inflates a gzip body within the size limit, refuses a gzip bomb with 413, and refuses invalid UTF-8 and non-JSON content types', async () => {
    const body = revenueCatTokenPurchase({ id: 'rc-hostile-gzip', userId: 'hostile-gzip-user' });
    const before = await inboxCount();
    // A bomb: 50 MB of zeros in about 50 kB; the limit applies to the inflated bytes.
    const bomb = await post(stack.ingest.port, '/webhooks/revenuecat', gzipSync(Buffer.alloc(50 * 1024 * 1024)), {
      'content-type': 'application/json',
      'content-encoding': 'gzip',
      authorization: revenueCatAuth,
    });
    const invalidUtf8 = await post(
      stack.ingest.port,
      '/webhooks/revenuecat',
      Buffer.concat([
        Buffer.from('{"event":{"id":"rc-hostile-utf8","type":"X","app_user_id":"'),
        Buffer.from([0xc3, 0x28]),
        Buffer.from('"}}'),
      ]),
      { 'content-type': 'application/json', authorization: revenueCatAuth },
    );
    const types = [];
    for (const contentType of ['text/plain', 'application/x-www-form-urlencoded', 'multipart/form-data; boundary=x']) {
      types.push((await stack.postRevenueCat(body, revenueCatAuth, contentType)).status);
    }
    expect({ bomb: bomb.status, invalidUtf8: invalidUtf8.status, types }).toEqual({
      bomb: 413,
      invalidUtf8: 400,
      types: [415, 415, 415],
    });
    expect(await inboxCount()).toBe(before);
    // HTTP compression is transport: the inflated body is what is authenticated and stored.
    const gzip = await post(stack.ingest.port, '/webhooks/revenuecat', gzipSync(body), {
      'content-type': 'application/json',
      'content-encoding': 'gzip',
      authorization: revenueCatAuth,
    });
    expect(gzip.status).toBe(200);
    const [row] = await stack.inboxRows('revenuecat', 'rc-hostile-gzip');
    expect(row?.raw_body).toBe(body);
  });

  it('answers a deeply nested body without crashing, and keeps serving', async () => {
    const depth = 200_000;
    const nested = `${'['.repeat(depth)}${']'.repeat(depth)}`;
    const body = `{"api_version":"1.0","event":{"id":"rc-hostile-deep","type":"NON_RENEWING_PURCHASE","app_user_id":"hostile-deep-user","deep":${nested}}}`;
    const big = await stack.postRevenueCat(body);
    // Over the 64 kB limit of the stack: 413. A nesting under the limit is parsed (V8's JSON
    // parser is not recursive) and stored.
    const shallowDepth = 20_000;
    const shallow = `{"api_version":"1.0","event":{"id":"rc-hostile-deep-2","type":"SOMETHING","app_user_id":"hostile-deep-user","deep":${'['.repeat(shallowDepth)}${']'.repeat(shallowDepth)}}}`;
    const small = await stack.postRevenueCat(shallow);
    expect({ big: big.status, small: small.status }).toEqual({ big: 413, small: 200 });
    expect((await stack.postRevenueCat(revenueCatTokenPurchase({ id: 'rc-hostile-after-deep' }))).status).toBe(200);
  });

  it('stores __proto__ keys and SQL fragments verbatim as data: no prototype pollution, no effect on other rows', async () => {
    stack.startWorker();
    const userId = `hostile'); DELETE FROM wallets; --`;
    const eventId = `rc-hostile-'; DROP TABLE ledger_entries; --`;
    const parsed = JSON.parse(revenueCatTokenPurchase({ id: eventId, userId }));
    const body = `{"__proto__":{"polluted":"yes"},"constructor":{"prototype":{"polluted":"yes"}},${JSON.stringify(parsed).slice(1, -1).replace('"event":{', '"event":{"__proto__":{"isAdmin":true},')}}`;
    expect((await stack.postRevenueCat(body)).status).toBe(200);
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
    const wallet = await eventually('the purchase to be credited to the literal user id', async () =>
      stack.db.selectFrom('wallets').selectAll().where('user_id', '=', userId).executeTakeFirst(),
    );
    expect(Number(wallet.balance)).toBe(100);
    const [row] = await stack.inboxRows('revenuecat', eventId);
    expect(row?.raw_body).toBe(body);
    const ledger = await ledgerOf(stack.db, userId, ['reference', 'user_id']);
    expect(ledger).toEqual([{ reference: `revenuecat:event:${eventId}`, user_id: userId }]);
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
  });

  it('rate-limits a flood of failed authentications per IP, and never limits or slows valid signed requests', async () => {
    const port = limited.port;
    const forged = stripeTokenPackPayment({ eventId: 'evt_hostile_flood', userId: 'hostile-flood-user' });
    const forgedHeader = `t=${Math.floor(Date.now() / 1000)},v1=${'f'.repeat(64)}`;
    const floodSize = 500;
    const floodConcurrency = 20;
    const floodStatuses: number[] = [];
    let validCount = 0;
    /** Valid signed deliveries one after another (Stripe and RevenueCat in turn), each timed. */
    const validRun = async (count: number, statuses: number[], latencies: number[]) => {
      for (let i = 0; i < count; i += 1) {
        const n = validCount++;
        const body =
          n % 2 === 0
            ? stripeTokenPackPayment({ eventId: `evt_hostile_valid_${n}`, userId: 'hostile-flood-valid' })
            : revenueCatTokenPurchase({ id: `rc-hostile-valid-${n}`, userId: 'hostile-flood-valid' });
        const started = performance.now();
        const response = await post(port, n % 2 === 0 ? '/webhooks/stripe' : '/webhooks/revenuecat', body, {
          'content-type': 'application/json',
          ...(n % 2 === 0 ? { 'stripe-signature': signStripe(body) } : { authorization: revenueCatAuth }),
        });
        await response.text();
        latencies.push(performance.now() - started);
        statuses.push(response.status);
      }
    };
    const percentile = (values: number[], p: number) =>
      [...values].sort((a, b) => a - b)[Math.min(values.length - 1, Math.ceil((values.length * p) / 100) - 1)] ?? 0;

    // The same valid traffic before the flood: the baseline on this machine, as loaded as it is now.
    const baselineStatuses: number[] = [];
    const baseline: number[] = [];
    await validRun(40, baselineStatuses, baseline);

    // 500 forged requests, 20 in flight at a time, from a process of their own (as an attacker's
    // would be: its client work does not share this event loop), while the valid traffic goes on.
    let floodDone = false;
    const flood = floodFromChild(port, forged, forgedHeader, floodSize, floodConcurrency)
      .then((statuses) => floodStatuses.push(...statuses))
      .finally(() => {
        floodDone = true;
      });
    const duringStatuses: number[] = [];
    const during: number[] = [];
    while (!floodDone) await validRun(1, duringStatuses, during);
    await flood;

    // The first `limit` failures are answered 400 (the reason), every later one 429, however
    // many are in flight at once; RevenueCat failures from the same IP count against the same budget.
    expect(floodStatuses).toHaveLength(floodSize);
    expect(floodStatuses.filter((status) => status === 400)).toHaveLength(limit);
    expect(floodStatuses.filter((status) => status === 429)).toHaveLength(floodSize - limit);
    const rcForged = await post(port, '/webhooks/revenuecat', '{}', {
      'content-type': 'application/json',
      authorization: 'Bearer forged',
    });
    expect(rcForged.status).toBe(429);
    expect(rcForged.headers.get('ratelimit')).toBeTruthy();
    expect([...baselineStatuses, ...duringStatuses]).toEqual(Array(baseline.length + during.length).fill(200));
    // Not slowed: valid requests during the flood are answered about as fast as before it, judged
    // against the baseline measured on the same machine a moment earlier (a fixed bound would be
    // either loose on a quiet machine or flaky on a loaded one). The server still spends CPU on
    // every forged request, so there is room for that queueing: the median may reach 3× the
    // baseline's (+100 ms). A limiter that queued or delayed valid requests behind the flood (a
    // tarpit of a few hundred ms, a shared concurrency cap) blows the median. The tail is not
    // judged: on a loaded 2-core machine one scheduler stall decides it (a p99 bound failed once at
    // load 23 with the limiter untouched); the bench is where tails are measured.
    expect(during.length).toBeGreaterThanOrEqual(10);
    const latency = {
      baselineMedianMs: Math.round(percentile(baseline, 50)),
      duringMedianMs: Math.round(percentile(during, 50)),
    };
    expect({
      ...latency,
      medianWithinBound:
        latency.duringMedianMs <= Math.max(3 * latency.baselineMedianMs, latency.baselineMedianMs + 100),
    }).toEqual({ ...latency, medianWithinBound: true });
    // A valid request from the blocked IP after the flood: still accepted.
    const after = stripeTokenPackPayment({ eventId: 'evt_hostile_after_flood', userId: 'hostile-flood-valid' });
    expect(
      (
        await post(port, '/webhooks/stripe', after, {
          'content-type': 'application/json',
          'stripe-signature': signStripe(after),
        })
      ).status,
    ).toBe(200);
  });

  it('answers 400, not 500, for a NUL in a path id or a query value and for a studio input holding \\u0000, and stores nothing', async () => {
    const answers: [string, number, unknown][] = [];
    for (const path of [
      '/v1/users/nul%00user/wallet',
      '/v1/users/nul%00user/ledger',
      '/v1/users/nul-user/studio/requests/req%00x',
      '/admin/users/nul%00user',
      '/admin/events?userId=nul%00user',
      '/admin/events/1%00',
    ]) {
      const response = await stack.apiRequest(path);
      answers.push([path, response.status, await response.json()]);
    }
    expect(answers).toEqual(
      answers.map(([path]) => [
        path,
        400,
        { error: { code: 'invalid_request', message: expect.stringContaining('NUL') } },
      ]),
    );

    for (const input of [{ prompt: 'a\u0000b' }, { 'key\u0000': 'x' }, ['ok', ['deep\u0000']], 'plain\u0000']) {
      const response = await stack.apiRequest('/v1/users/nul-user/studio/requests', {
        method: 'POST',
        body: { kind: 'image_edit', input },
      });
      expect({ status: response.status, body: await response.json() }).toEqual({
        status: 400,
        body: { error: { code: 'invalid_request', message: expect.stringContaining('input: must not contain NUL') } },
      });
    }
    expect(
      await stack.db.selectFrom('studio_requests').select('id').where('user_id', 'like', 'nul%').execute(),
    ).toEqual([]);
    // The same request without the NUL is accepted.
    const fine = await stack.apiRequest('/v1/users/nul-user/studio/requests', {
      method: 'POST',
      body: { kind: 'image_edit', input: { prompt: 'ab' } },
    });
    expect(fine.status).toBe(202);
  });
});
