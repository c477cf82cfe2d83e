import { migrationsDir } from '@tally/billing-core';
import { baseEnvSchema, ensureDatabaseExists, migrate, parseEnv } from '@tally/platform';
import { namingPostgres } from './unreachable-server';

/**
 * `DATABASE_MIGRATION_URL`: the direct connection to Postgres that migrations use, default
 * `DATABASE_URL` (set here, so the parsed value is always there). Where the services reach
 * Postgres through PgBouncer, point it past the pooler: DDL can outlast a pooler's timeouts, and
 * creating a missing database needs the server itself.
 */
export const migrateEnvSchema = baseEnvSchema
  .pick({ DATABASE_URL: true })
  .extend({ DATABASE_MIGRATION_URL: baseEnvSchema.shape.DATABASE_URL.optional() })
  .overwrite((env) => ({ ...env, DATABASE_MIGRATION_URL: env.DATABASE_MIGRATION_URL ?? env.DATABASE_URL }));

/** `tally migrate`: creates the database when missing (unless told not to) and applies migrations. */
export async function runMigrate(options: { createDatabase: boolean }): Promise<void> {
  const env = parseEnv(migrateEnvSchema, process.env);
  // Always set by the schema's overwrite; the type (zod keeps it optional) needs the fallback.
  const url = env.DATABASE_MIGRATION_URL ?? env.DATABASE_URL;
  await namingPostgres(
    url,
    async () => {
      if (options.createDatabase && (await ensureDatabaseExists(url))) {
        process.stdout.write('created the database\n');
      }
      const result = await migrate(url, migrationsDir);
      for (const version of result.applied) process.stdout.write(`applied ${version}\n`);
      process.stdout.write(
        result.applied.length === 0
          ? `database is up to date (${result.alreadyApplied.length} migrations)\n`
          : `applied ${result.applied.length} migration(s)\n`,
      );
    },
    'check DATABASE_MIGRATION_URL (default DATABASE_URL)',
  );
}
