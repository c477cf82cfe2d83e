import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { createDb, type Database } from '../db/create-db';

/**
 * The Postgres server of the tests: TEST_DATABASE_URL wins, otherwise the local default. (The
 * Jest global setup starts a container and sets it when neither answers and Docker is available.)
 */
export const localDatabaseServerUrl = 'postgres://postgres@127.0.0.1:5432/postgres';

export function testDatabaseServerUrl(): string {
  return process.env.TEST_DATABASE_URL ?? localDatabaseServerUrl;
}

/**
 * TEST_POOLER_URL: a PgBouncer (transaction mode) in front of the test server, set by the Jest
 * global setup when TEST_VIA_PGBOUNCER=1. Test databases are then reached through it: every
 * service a test file starts uses the pooler, as a scaled deployment does.
 */
export function testPoolerServerUrl(): string | undefined {
  return process.env.TEST_POOLER_URL || undefined;
}

/** The URL of database `name` on the server of `serverUrl`. */
export function databaseUrl(serverUrl: string, name: string): string {
  const url = new URL(serverUrl);
  url.pathname = `/${name}`;
  return url.toString();
}

/** Runs `fn` with a client on the test server's `postgres` database (CREATE / DROP DATABASE). */
export async function withAdminClient<T>(fn: (client: pg.Client) => Promise<T>): Promise<T> {
  const client = new pg.Client({ connectionString: testDatabaseServerUrl() });
  // A lost connection fails the query in flight; unhandled, pg's 'error' event would kill Jest.
  client.on('error', () => undefined);
  await client.connect();
  try {
    return await fn(client);
  } finally {
    await client.end();
  }
}

export interface EmptyTestDatabase extends Database<unknown> {
  /** Through the pooler when TEST_POOLER_URL is set, else on the server directly. */
  url: string;
  name: string;
  /** Closes the pool and drops the database. */
  drop(): Promise<void>;
}

/**
 * A fresh database with no tables, for one test file of the plumbing (the application's own
 * tests clone its migrated template instead). Prepared statements as on a direct connection,
 * off through the pooler (PgBouncer 1.18 cannot route them).
 */
export async function createEmptyTestDatabase(): Promise<EmptyTestDatabase> {
  const name = `tally_test_empty_${Date.now().toString(36)}_${randomBytes(4).toString('hex')}`;
  await withAdminClient((client) => client.query(`CREATE DATABASE ${pg.escapeIdentifier(name)}`));
  const pooler = testPoolerServerUrl();
  const url = databaseUrl(pooler ?? testDatabaseServerUrl(), name);
  const database = createDb<unknown>({ connectionString: url, maxConnections: 20, preparedStatements: !pooler });
  return {
    ...database,
    url,
    name,
    async drop() {
      await database.close();
      await dropTestDatabase(name);
    },
  };
}

/** Drops a test database; a connection still open to it is cut off. */
export async function dropTestDatabase(name: string): Promise<void> {
  await withAdminClient((client) => client.query(`DROP DATABASE IF EXISTS ${pg.escapeIdentifier(name)} WITH (FORCE)`));
}

/**
 * The one set-up of a test file's database: registers in the calling describe block a beforeAll
 * that makes it with `create` and an afterAll that drops it. The object returned is filled in by
 * the beforeAll, so tests and later hooks read it as the database itself.
 */
export function useDatabase<Made extends { drop(): Promise<void> }>(create: () => Promise<Made>): Made {
  const database = {} as Made;
  beforeAll(async () => {
    Object.assign(database, await create());
  });
  afterAll(() => database.drop());
  return database;
}
