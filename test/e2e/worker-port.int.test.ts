import { type ChildProcess, spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import path from 'node:path';
import { createTestDatabase, type TestDatabase, testRedisUrl, uniqueQueuePrefix } from '@tally/billing-core/testing';

const root = path.resolve(__dirname, '../..');

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
