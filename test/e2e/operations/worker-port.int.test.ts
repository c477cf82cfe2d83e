import { type ChildProcess, spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import path from 'node:path';
import { createTestDatabase, type TestDatabase, testRedisUrl, uniqueQueuePrefix } from '@tally/billing-core/testing';
import { RunningProcess } from '../../support/built-process';
import { eventually } from '../../support/stack';

const root = path.resolve(__dirname, '../../..');

describe('worker metrics port', () => {
  let database: TestDatabase;
  let worker: ChildProcess | undefined;
  beforeAll(async () => {
    database = await createTestDatabase();
  });
  afterAll(async () => {
    if (worker && worker.exitCode === null) {
      const exited = new Promise((resolve) => worker?.once('exit', resolve));
      worker.kill('SIGTERM');
      await exited;
    }
    await database.drop();
  });

  it('answers unknown routes with the JSON 404, like every Tally port', async () => {
    const main = path.join(root, 'apps', 'worker', 'dist', 'main.js');
    if (!existsSync(main))
      throw new Error(`${main} is missing: run the tests through \`pnpm test\`, which builds first`);
    const child = spawn(process.execPath, [main], {
      env: {
        PATH: process.env.PATH ?? '',
        DATABASE_URL: database.url,
        REDIS_URL: testRedisUrl(),
        QUEUE_PREFIX: uniqueQueuePrefix(),
        WORKER_METRICS_PORT: '0',
      },
      cwd: path.join(root, 'test'),
    });
    worker = child;
    const port = await new Promise<number>((resolve, reject) => {
      let stdout = '';
      child.stdout?.on('data', (chunk) => {
        stdout += chunk;
        const match = /"metricsPort":(\d+)/.exec(stdout);
        if (match) resolve(Number(match[1]));
      });
      child.once('exit', (code) => reject(new Error(`worker exited with ${code} before listening`)));
    });

    const response = await fetch(`http://127.0.0.1:${port}/no-such-route`);
    expect({
      status: response.status,
      type: response.headers.get('content-type'),
      poweredBy: response.headers.get('x-powered-by'),
      body: await response.json(),
    }).toEqual({
      status: 404,
      type: expect.stringContaining('application/json'),
      poweredBy: null,
      body: { error: { code: 'not_found', message: 'no such route' } },
    });
    expect((await fetch(`http://127.0.0.1:${port}/healthz`)).status).toBe(200);
  });
});

describe('Request-Id on the worker metrics port', () => {
  let database: TestDatabase;
  let worker: RunningProcess | undefined;
  beforeAll(async () => {
    database = await createTestDatabase();
  });
  afterAll(async () => {
    await worker?.stop();
    await database.drop();
  });

  /** The worker's JSON log lines written with one request id. */
  const linesOf = (process: RunningProcess, requestId: string) =>
    process.output
      .split('\n')
      .filter((line) => line.startsWith('{'))
      .map((line) => JSON.parse(line) as { msg: string; requestId?: string })
      .filter((line) => line.requestId === requestId)
      .map((line) => line.msg);

  it('keeps a valid X-Request-Id, makes one otherwise (404, /readyz 503, /metrics), and logs it with the request', async () => {
    // A database that does not exist on a server that runs: the process runs, its readiness says
    // Postgres is unavailable.
    const missing = new URL(database.url);
    missing.pathname = '/tally_request_id_no_such_database';
    worker = new RunningProcess('worker', {
      DATABASE_URL: missing.toString(),
      REDIS_URL: testRedisUrl(),
      QUEUE_PREFIX: uniqueQueuePrefix(),
      WORKER_METRICS_PORT: '0',
    });
    const started = await worker.waitForLog('worker started');
    const base = `http://127.0.0.1:${started.metricsPort}`;
    const answer = async (path: string, headers: Record<string, string> = {}) => {
      const response = await fetch(`${base}${path}`, { headers });
      await response.body?.cancel();
      return { status: response.status, requestId: response.headers.get('request-id') ?? '' };
    };
    expect(await answer('/healthz', { 'x-request-id': 'probe-1' })).toEqual({ status: 200, requestId: 'probe-1' });
    const kept = await answer('/no-such-route', { 'x-request-id': 'ops-404' });
    const replaced = await answer('/no-such-route', { 'x-request-id': `ops ${'z'.repeat(10)}` });
    const notReady = await answer('/readyz');
    const scrape = await answer('/metrics');
    expect(kept).toEqual({ status: 404, requestId: 'ops-404' });
    expect([replaced, notReady, scrape].map((each) => each.status)).toEqual([404, 503, 200]);
    for (const each of [replaced, notReady, scrape]) expect(each.requestId).toMatch(/^req_[0-9a-f]{24}$/);
    await eventually('the access lines of both 404s', async () =>
      linesOf(worker as RunningProcess, replaced.requestId).length > 0 ? true : undefined,
    );
    expect(linesOf(worker, 'ops-404')).toEqual(['request completed']);
    expect(linesOf(worker, replaced.requestId)).toEqual(['request completed']);
    // Probes and scrapes have no access line; the readiness handler's own lines carry the id (one
    // per failing check: Postgres always, and another check too when it is slow to answer).
    const readinessLines = linesOf(worker, notReady.requestId);
    expect(readinessLines.length).toBeGreaterThan(0);
    expect(new Set(readinessLines)).toEqual(new Set(['readiness check failed']));
  });
});
