import { createHash } from 'node:crypto';
import { readdir, readFile } from 'node:fs/promises';
import path from 'node:path';
import pg from 'pg';
import { MIGRATION_LOCK_KEY } from './advisory-locks';

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
 * Applies the pending migrations of `dir` (numbered plain-SQL files, `0001_name.sql`; the
 * application passes its own folder) in order, each in its own transaction that first takes the
 * transaction-scoped advisory lock MIGRATION_LOCK_KEY and then re-reads whether that migration is
 * applied, so several processes (a Kubernetes Job and a developer, two test workers) can run it
 * at once and each migration is applied once. No session state (no session lock that a
 * transaction pooler would strand on a server connection), though `DATABASE_MIGRATION_URL`
 * should still name the server directly: DDL may outlast a pooler's query timeouts. Idempotent.
 * Throws MigrationChecksumError when an applied file was edited.
 */
export async function migrate(connectionString: string, dir: string): Promise<MigrationResult> {
  const migrations = await readMigrations(dir);
  const client = createMigrationClient(connectionString);
  await client.connect();
  /** Runs `work` in a transaction holding the migration lock; rolls back when it throws. */
  const locked = async <T>(work: () => Promise<T>): Promise<T> => {
    await client.query('BEGIN');
    try {
      // guard: migration-lock
      await client.query('SELECT pg_advisory_xact_lock($1)', [MIGRATION_LOCK_KEY]);
      const value = await work();
      await client.query('COMMIT');
      return value;
    } catch (error) {
      // A lost connection fails the ROLLBACK too; report the original error.
      await client.query('ROLLBACK').catch(() => undefined);
      throw error;
    }
  };
  try {
    await locked(() =>
      client.query(`CREATE TABLE IF NOT EXISTS schema_migrations (
        version text PRIMARY KEY,
        checksum text NOT NULL,
        applied_at timestamptz NOT NULL DEFAULT now()
      )`),
    );
    const result: MigrationResult = { applied: [], alreadyApplied: [] };
    for (const migration of migrations) {
      const applied = await locked(async () => {
        const { rows } = await client.query<{ checksum: string }>(
          'SELECT checksum FROM schema_migrations WHERE version = $1',
          [migration.version],
        );
        const existing = rows[0]?.checksum;
        if (existing !== undefined) {
          if (existing !== migration.checksum) throw new MigrationChecksumError(migration.version);
          return false;
        }
        try {
          await client.query(migration.sql);
        } catch (error) {
          throw new Error(
            `migration ${migration.version} failed: ${error instanceof Error ? error.message : String(error)}`,
          );
        }
        await client.query('INSERT INTO schema_migrations (version, checksum) VALUES ($1, $2)', [
          migration.version,
          migration.checksum,
        ]);
        return true;
      });
      (applied ? result.applied : result.alreadyApplied).push(migration.version);
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
