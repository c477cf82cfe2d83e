import { ensureDatabaseExists, migrate } from '@tally/billing-core';
import { baseEnvSchema, parseEnv } from '@tally/platform';
import { namingPostgres } from './unreachable-server';

export const migrateEnvSchema = baseEnvSchema.pick({ DATABASE_URL: true });

/** `tally migrate`: creates the database when missing (unless told not to) and applies migrations. */
export async function runMigrate(options: { createDatabase: boolean }): Promise<void> {
  const { DATABASE_URL } = parseEnv(migrateEnvSchema, process.env);
  await namingPostgres(DATABASE_URL, async () => {
    if (options.createDatabase && (await ensureDatabaseExists(DATABASE_URL))) {
      process.stdout.write('created the database\n');
    }
    const result = await migrate(DATABASE_URL);
    for (const version of result.applied) process.stdout.write(`applied ${version}\n`);
    process.stdout.write(
      result.applied.length === 0
        ? `database is up to date (${result.alreadyApplied.length} migrations)\n`
        : `applied ${result.applied.length} migration(s)\n`,
    );
  });
}
