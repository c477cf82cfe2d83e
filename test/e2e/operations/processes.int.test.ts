import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import path from 'node:path';
import { createTestDatabase, type TestDatabase, testRedisUrl, uniqueQueuePrefix } from '@tally/billing-core/testing';
import { RunningProcess } from '../../support/built-process';
import { connects, listeningAddresses, nonLoopbackAddress } from '../../support/listening';

const root = path.resolve(__dirname, '../../..');

/** Runs a built process (pnpm test builds first) with exactly the given environment. */
function runProcess(app: string, env: Record<string, string>, options: { stopAfterReadyMs?: number } = {}) {
  const main = path.join(root, 'apps', app, 'dist', 'main.js');
  if (!existsSync(main)) throw new Error(`${main} is missing: run the tests through \`pnpm test\`, which builds first`);
  return new Promise<{ code: number | null; stdout: string; stderr: string }>((resolve) => {
    const child = spawn(process.execPath, [main], {
      env: { PATH: process.env.PATH ?? '', ...env },
      cwd: path.join(root, 'test'),
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk) => {
      stdout += chunk;
      if (options.stopAfterReadyMs !== undefined && /listening|worker started/.test(stdout)) {
        setTimeout(() => child.kill('SIGTERM'), options.stopAfterReadyMs);
      }
    });
    child.stderr.on('data', (chunk) => {
      stderr += chunk;
    });
    child.on('exit', (code) => resolve({ code, stdout, stderr }));
  });
}

describe('processes', () => {
  let database: TestDatabase;
  beforeAll(async () => {
    database = await createTestDatabase();
  });
  afterAll(() => database.drop());

  it.each(['ingest', 'api', 'worker'])(
    '%s exits 1 with a readable list when its configuration is invalid',
    async (app) => {
      const result = await runProcess(app, { DATABASE_URL: 'mysql://nope', REDIS_URL: 'http://nope' });
      expect(result.code).toBe(1);
      expect(result.stderr).toContain(`${app}: invalid configuration:`);
      expect(result.stderr).toContain('DATABASE_URL: must be a postgres:// URL');
      expect(result.stderr).toContain('REDIS_URL: must be a redis:// or rediss:// URL');
    },
  );

  it('worker exits 1 listing every AI Studio cross-field problem (key without URL, stuck limit not above the AI timeout)', async () => {
    // Everything else is valid: without the check the worker would start (and be stopped after 200 ms with 0).
    const result = await runProcess(
      'worker',
      {
        DATABASE_URL: database.url,
        REDIS_URL: testRedisUrl(),
        QUEUE_PREFIX: uniqueQueuePrefix(),
        WORKER_METRICS_PORT: '0',
        AI_STUDIO_BASE_URL: 'http://127.0.0.1:9/ai',
        AI_STUDIO_TIMEOUT_MS: '5000',
        STUDIO_STUCK_AFTER_MS: '5000',
      },
      { stopAfterReadyMs: 200 },
    );
    expect(result.code).toBe(1);
    expect(result.stderr).toContain('worker: invalid configuration:');
    expect(result.stderr).toContain('  - AI_STUDIO_API_KEY is required when AI_STUDIO_BASE_URL is set');
    expect(result.stderr).toContain('  - STUDIO_STUCK_AFTER_MS must exceed AI_STUDIO_TIMEOUT_MS');
    expect(result.stdout).not.toContain('worker started');
  });

  it('exits 1 naming the problem when the catalog file is invalid', async () => {
    const result = await runProcess('worker', { DATABASE_URL: database.url, CATALOG_PATH: __filename });
    expect(result.code).toBe(1);
    expect(result.stderr).toContain('is not JSON');
  });

  it.each([
    ['ingest', { INGEST_PORT: '0', REVENUECAT_WEBHOOK_AUTH: 'secret-value-never-logged' }],
    ['api', { API_PORT: '0', APP_API_KEYS: 'k1', ADMIN_API_KEYS: 'k2' }],
    ['worker', { WORKER_METRICS_PORT: '0' }],
  ])('%s starts, then stops cleanly with exit 0 on SIGTERM', async (app, extra) => {
    const result = await runProcess(
      app,
      {
        DATABASE_URL: database.url,
        // Off through the PgBouncer pass's pooler (PgBouncer 1.18), on (the default) otherwise.
        DATABASE_PREPARED_STATEMENTS: String(database.preparedStatements()),
        REDIS_URL: testRedisUrl(),
        QUEUE_PREFIX: uniqueQueuePrefix(),
        ...extra,
      },
      { stopAfterReadyMs: 200 },
    );
    expect({ code: result.code, stderr: result.stderr }).toEqual({ code: 0, stderr: '' });
    expect(result.stdout).toContain(`"msg":"${app} stopped"`);
    expect(result.stdout).not.toContain('secret-value-never-logged');
  });

  describe("bind address: the loopback unless HOST or the service's own *_HOST says otherwise", () => {
    const services = [
      {
        app: 'ingest',
        ready: 'ingest listening',
        portKey: 'port',
        hostKey: 'host',
        own: 'INGEST_HOST',
        env: { INGEST_PORT: '0', REVENUECAT_WEBHOOK_AUTH: 'Bearer bind-test' },
      },
      {
        app: 'api',
        ready: 'api listening',
        portKey: 'port',
        hostKey: 'host',
        own: 'API_HOST',
        env: { API_PORT: '0', APP_API_KEYS: 'k1', ADMIN_API_KEYS: 'k2' },
      },
      {
        app: 'worker',
        ready: 'worker started',
        portKey: 'metricsPort',
        hostKey: 'metricsHost',
        own: 'WORKER_METRICS_HOST',
        env: { WORKER_METRICS_PORT: '0', WORKER_ROLES: 'relay' },
      },
    ] as const;
    const elsewhere = nonLoopbackAddress();

    /** Starts the built service with `extra`, and reports where it listens and who reaches it. */
    async function bindingOf(service: (typeof services)[number], extra: Record<string, string>) {
      const child = new RunningProcess(service.app, {
        DATABASE_URL: database.url,
        DATABASE_PREPARED_STATEMENTS: String(database.preparedStatements()),
        REDIS_URL: testRedisUrl(),
        QUEUE_PREFIX: uniqueQueuePrefix(),
        ...service.env,
        ...extra,
      });
      try {
        const ready = await child.waitForLog(service.ready);
        const port = Number(ready[service.portKey]);
        return {
          logged: ready[service.hostKey],
          listening: listeningAddresses(port),
          fromLoopback: await connects('127.0.0.1', port),
          fromNetwork: elsewhere === undefined ? 'no other interface' : await connects(elsewhere, port),
        };
      } finally {
        expect((await child.stop()).code).toBe(0);
      }
    }

    it.each(services)('$app listens on 127.0.0.1 by default, unreachable from the network', async (service) => {
      expect(await bindingOf(service, {})).toEqual({
        logged: '127.0.0.1',
        listening: ['127.0.0.1'],
        fromLoopback: true,
        fromNetwork: elsewhere === undefined ? 'no other interface' : false,
      });
    });

    it.each(services)(
      '$app listens on every interface with HOST=0.0.0.0, and on its own *_HOST over HOST',
      async (service) => {
        expect(await bindingOf(service, { HOST: '0.0.0.0' })).toEqual({
          logged: '0.0.0.0',
          listening: ['0.0.0.0'],
          fromLoopback: true,
          fromNetwork: elsewhere === undefined ? 'no other interface' : true,
        });
        expect(await bindingOf(service, { HOST: '0.0.0.0', [service.own]: '127.0.0.1' })).toMatchObject({
          logged: '127.0.0.1',
          listening: ['127.0.0.1'],
        });
      },
    );
  });
});
