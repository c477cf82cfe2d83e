import { createHash } from 'node:crypto';
import { readdir, readFile } from 'node:fs/promises';
import path from 'node:path';
import pg from 'pg';
import { MIGRATION_LOCK_KEY } from './advisory-locks';

/** The folder of numbered plain-SQL migrations shipped with billing-core. */
export const migrationsDir = path.resolve(__dirname, '../../migrations');

const MIGRATION_FILE = /^(\d{4})_[a-z0-9_]+\.sql$/;

export interface MigrationResult {
  applied: string[];
  alreadyApplied: string[];
}

export class MigrationChecksumError extends Error {
  readonly code = 'migration_checksum_mismatch';
  constructor(version: string) {
    super(
      `migration ${version} changed after it was applied; migrations are frozen once landed, add a new file instead`,
    );
  }
}

/**
 * A client whose lost connection fails its queries instead of crashing the process (pg throws an
 * 'error' event nobody listens to).
 */
function createMigrationClient(connectionString: string): pg.Client {
  const client = new pg.Client({ connectionString, application_name: 'tally-migrate' });
  client.on('error', () => undefined);
  return client;
}

interface MigrationFile {
  version: string;
  sql: string;
  checksum: string;
}

async function readMigrations(dir: string): Promise<MigrationFile[]> {
  const names = (await readdir(dir)).filter((name) => MIGRATION_FILE.test(name)).sort();
  return Promise.all(
    names.map(async (name) => {
      const sql = await readFile(path.join(dir, name), 'utf8');
      return {
        version: name.replace(/\.sql$/, ''),
        sql,
        checksum: createHash('sha256').update(sql).digest('hex'),
      };
    }),
  );
}

/**
 * Applies pending migrations in order, each in its own transaction, under a session advisory
 * lock so that several processes (a Kubernetes Job and a developer, two test workers) can run it
 * at once. Idempotent. Throws MigrationChecksumError when an applied file was edited.
 */
export async function migrate(connectionString: string, dir = migrationsDir): Promise<MigrationResult> {
  const migrations = await readMigrations(dir);
  const client = createMigrationClient(connectionString);
  await client.connect();
  try {
    await client.query('SELECT pg_advisory_lock($1)', [MIGRATION_LOCK_KEY]);
    await client.query(`CREATE TABLE IF NOT EXISTS schema_migrations (
      version text PRIMARY KEY,
      checksum text NOT NULL,
      applied_at timestamptz NOT NULL DEFAULT now()
    )`);
    const { rows } = await client.query<{ version: string; checksum: string }>(
      'SELECT version, checksum FROM schema_migrations',
    );
    const applied = new Map(rows.map((row) => [row.version, row.checksum]));
    const result: MigrationResult = { applied: [], alreadyApplied: [] };
    for (const migration of migrations) {
      const existing = applied.get(migration.version);
      if (existing !== undefined) {
        if (existing !== migration.checksum) throw new MigrationChecksumError(migration.version);
        result.alreadyApplied.push(migration.version);
        continue;
      }
      await client.query('BEGIN');
      try {
        await client.query(migration.sql);
        await client.query('INSERT INTO schema_migrations (version, checksum) VALUES ($1, $2)', [
          migration.version,
          migration.checksum,
        ]);
        await client.query('COMMIT');
      } catch (error) {
        // A lost connection fails the ROLLBACK too; report the migration's own error.
        await client.query('ROLLBACK').catch(() => undefined);
        throw new Error(
          `migration ${migration.version} failed: ${error instanceof Error ? error.message : String(error)}`,
        );
      }
      result.applied.push(migration.version);
    }
    return result;
  } finally {
    await client.end().catch(() => undefined);
  }
}

/**
 * Creates the database named in the URL when it does not exist, connecting to the server's
 * `postgres` database to do so. Returns true when it created it.
 */
export async function ensureDatabaseExists(connectionString: string): Promise<boolean> {
  const url = new URL(connectionString);
  const name = decodeURIComponent(url.pathname.replace(/^\//, ''));
  if (!name) throw new Error('DATABASE_URL names no database');
  const admin = new URL(connectionString);
  admin.pathname = '/postgres';
  const client = createMigrationClient(admin.toString());
  await client.connect();
  try {
    const { rowCount } = await client.query('SELECT 1 FROM pg_database WHERE datname = $1', [name]);
    if (rowCount) return false;
    try {
      await client.query(`CREATE DATABASE ${pg.escapeIdentifier(name)}`);
    } catch (error) {
      // Another process created it between our check and our CREATE.
      if ((error as { code?: string }).code === '42P04') return false;
      throw error;
    }
    return true;
  } finally {
    await client.end().catch(() => undefined);
  }
}
