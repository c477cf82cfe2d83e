// Finds real Postgres and Redis for the tests: TEST_DATABASE_URL / TEST_REDIS_URL when set, the
// local defaults when they answer, testcontainers (Docker) otherwise; then migrates the template
// database that each test file clones. With TEST_VIA_PGBOUNCER=1 (jest.pgbouncer.config.js) it
// also starts a private PgBouncer in transaction mode in front of that Postgres and sets
// TEST_POOLER_URL, through which every test database is then reached. Variables set here reach
// the test workers.
import { mkdtempSync } from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { localRedisUrl, prepareTemplateDatabase } from '../packages/billing-core/src/testing/test-services';
import { localDatabaseServerUrl, testDatabaseServerUrl } from '../packages/platform/src/testing/test-database';
import { PgBouncer } from './support/pgbouncer';

type Stoppable = { stop(): Promise<unknown> };
const holder = globalThis as { __tallyContainers?: Stoppable[] };

function answers(url: string, defaultPort: number): Promise<boolean> {
  const { hostname, port } = new URL(url);
  return new Promise((resolve) => {
    const socket = net.connect({ host: hostname, port: Number(port || defaultPort) });
    socket.setTimeout(1_000);
    socket.once('connect', () => {
      socket.destroy();
      resolve(true);
    });
    socket.once('timeout', () => {
      socket.destroy();
      resolve(false);
    });
    socket.once('error', () => resolve(false));
  });
}

export default async function globalSetup(): Promise<void> {
  holder.__tallyContainers = [];
  // Where the workers record the api answers they matched against the OpenAPI document (support/openapi-answers.ts).
  process.env.TALLY_OPENAPI_SEEN_DIR = mkdtempSync(path.join(os.tmpdir(), 'tally-openapi-seen-'));
  if (!process.env.TEST_DATABASE_URL && !(await answers(localDatabaseServerUrl, 5432))) {
    const { PostgreSqlContainer } = await import('@testcontainers/postgresql');
    const container = await new PostgreSqlContainer('postgres:15').start();
    holder.__tallyContainers.push(container);
    const url = new URL(container.getConnectionUri());
    url.pathname = '/postgres';
    process.env.TEST_DATABASE_URL = url.toString();
  }
  if (!process.env.TEST_REDIS_URL && !(await answers(localRedisUrl, 6379))) {
    const { RedisContainer } = await import('@testcontainers/redis');
    const container = await new RedisContainer('redis:7').start();
    holder.__tallyContainers.push(container);
    process.env.TEST_REDIS_URL = container.getConnectionUrl();
  }
  await prepareTemplateDatabase();
  if (process.env.TEST_VIA_PGBOUNCER === '1' && !process.env.TEST_POOLER_URL) {
    // Five server connections per test database, while one test file's pools add up to 20 or more.
    const bouncer = await PgBouncer.start({ upstreamUrl: testDatabaseServerUrl(), poolSize: 5 });
    holder.__tallyContainers.push(bouncer);
    process.env.TEST_POOLER_URL = bouncer.serverUrl();
  }
}
