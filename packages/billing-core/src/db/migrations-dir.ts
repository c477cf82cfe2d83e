import path from 'node:path';

/**
 * The folder of billing-core's numbered plain-SQL migrations (packages/billing-core/migrations),
 * which the runner (`migrate(url, migrationsDir)` of @tally/platform/db) applies.
 */
export const migrationsDir = path.resolve(__dirname, '../../migrations');
