import { createHash, randomBytes } from 'node:crypto';
import { readdirSync, readFileSync } from 'node:fs';
import { cp, mkdtemp, readdir, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { createDb, type Database, ensureDatabaseExists, migrate } from '@tally/platform/db';
import {
  databaseUrl,
  dropTestDatabase,
  testDatabaseServerUrl,
  testPoolerServerUrl,
  useDatabase,
  withAdminClient,
} from '@tally/platform/testing';
import pg from 'pg';
import { migrationsDir } from '../db/migrations-dir';
import type { DB } from '../db/schema';

/**
 * Test services: real Postgres and Redis. The Postgres server is @tally/platform/testing's
 * (TEST_DATABASE_URL, TEST_POOLER_URL); TEST_REDIS_URL wins over the local Redis. (The Jest global
 * setup starts containers and sets these variables when neither answers and Docker is available.)
 */
export const localRedisUrl = 'redis://127.0.0.1:6379';

export function testRedisUrl(): string {
  return process.env.TEST_REDIS_URL ?? localRedisUrl;
}

/** The template's name changes whenever a migration file does, so stale templates are never used. */
export function templateDatabaseName(): string {
  const hash = createHash('sha256');
  for (const name of readdirSync(migrationsDir).sort()) {
    hash.update(name).update(readFileSync(path.join(migrationsDir, name)));
  }
  return `tally_test_template_${hash.digest('hex').slice(0, 12)}`;
}

/** Creates and migrates the template database once; later test files clone it. */
export async function prepareTemplateDatabase(): Promise<string> {
  const name = templateDatabaseName();
  await withAdminClient(async (client) => {
    const { rowCount } = await client.query('SELECT 1 FROM pg_database WHERE datname = $1', [name]);
    if (rowCount) return;
    // Build under a temporary name and rename, so a crash never leaves a half-migrated template.
    const building = `${name}_build_${randomBytes(3).toString('hex')}`;
    await client.query(`CREATE DATABASE ${pg.escapeIdentifier(building)}`);
    await migrate(databaseUrl(testDatabaseServerUrl(), building), migrationsDir);
    try {
      await client.query(`ALTER DATABASE ${pg.escapeIdentifier(building)} RENAME TO ${pg.escapeIdentifier(name)}`);
    } catch (error) {
      await client.query(`DROP DATABASE IF EXISTS ${pg.escapeIdentifier(building)}`);
      if ((error as { code?: string }).code !== '42P04') throw error;
    }
  });
  return name;
}

export interface TestDatabase extends Database<DB> {
  /** What services use: through the pooler when TEST_POOLER_URL is set, else directUrl. */
  url: string;
  /** The database on the Postgres server itself (migrations, DATABASE_MIGRATION_URL). */
  directUrl: string;
  name: string;
  /** Closes the pool and drops the database. */
  drop(): Promise<void>;
}

/** A fresh, migrated database of its own for one test file, cloned from the template. */
export async function createTestDatabase(): Promise<TestDatabase> {
  const template = await prepareTemplateDatabase();
  const name = `tally_test_${Date.now().toString(36)}_${randomBytes(4).toString('hex')}`;
  await withAdminClient((client) =>
    client.query(`CREATE DATABASE ${pg.escapeIdentifier(name)} TEMPLATE ${pg.escapeIdentifier(template)}`),
  );
  const directUrl = databaseUrl(testDatabaseServerUrl(), name);
  const pooler = testPoolerServerUrl();
  const url = pooler ? databaseUrl(pooler, name) : directUrl;
  // Prepared statements as a process on a direct connection runs them (the default), and off
  // through the pooler (PgBouncer 1.18 cannot route them), as docs/scaling.md says to configure.
  const database = createDb<DB>({ connectionString: url, maxConnections: 20, preparedStatements: !pooler });
  return {
    ...database,
    url,
    directUrl,
    name,
    async drop() {
      await database.close();
      await dropTestDatabase(name);
    },
  };
}

/**
 * A database of its own migrated only up to `version` (excluded): a database of the release
 * before that migration, for tests of a migration on the rows it finds. `migrate(url)` then
 * applies the rest; `drop()` removes the database. Direct, never through a pooler (DDL).
 */
export async function createDatabaseMigratedBefore(
  version: string,
): Promise<{ url: string; applied: string[]; drop(): Promise<void> }> {
  const name = `tally_test_before_${version}_${Date.now().toString(36)}_${randomBytes(4).toString('hex')}`;
  const url = databaseUrl(testDatabaseServerUrl(), name);
  const dir = await mkdtemp(path.join(tmpdir(), `tally-migrations-before-${version}-`));
  try {
    for (const file of await readdir(migrationsDir)) {
      if (/^\d{4}_/.test(file) && file < version) await cp(path.join(migrationsDir, file), path.join(dir, file));
    }
    await ensureDatabaseExists(url);
    const { applied } = await migrate(url, dir);
    return {
      url,
      applied,
      drop: () => dropTestDatabase(name),
    };
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

/** The database of a migration test (useDatabaseMigratedBefore), filled in by its beforeAll. */
export interface MigrationTestDatabase {
  /** Its URL (direct, never through a pooler). */
  url: string;
  /** The migrations it was given: every one before the version under test. */
  applied: string[];
  /** A client connected to it. */
  client: pg.Client;
  /** Applies the migrations it lacks, the one under test first. */
  migrateRest(): ReturnType<typeof migrate>;
  /** Ends the client and drops the database. */
  drop(): Promise<void>;
}

/**
 * The one set-up of a test of migration `version` on the rows it finds (useDatabase): before all,
 * a database of the release before it (createDatabaseMigratedBefore) and a client connected to
 * it; after all, both gone.
 */
export function useDatabaseMigratedBefore(version: string): MigrationTestDatabase {
  return useDatabase(async () => {
    const database = await createDatabaseMigratedBefore(version);
    const client = new pg.Client({ connectionString: database.url });
    await client.connect();
    return {
      ...database,
      client,
      migrateRest: () => migrate(database.url, migrationsDir),
      async drop() {
        await client.end();
        await database.drop();
      },
    };
  });
}

/** A BullMQ prefix no other test uses, so queues never share keys. */
export function uniqueQueuePrefix(): string {
  return `tally-test-${randomBytes(5).toString('hex')}`;
}
