import { maxUsageReportDays, reportUsage, resolveUserId } from '@tally/billing-core';
import { baseEnvSchema, parseEnv } from '@tally/platform';
import { fail, printJson } from './output';
import { withDatabase } from './unreachable-server';
import { formatTable } from './user';

const datePattern = /^\d{4}-\d{2}-\d{2}$/;

/**
 * `tally usage [userId] [--from d] [--to d] [--feature f] [--json]`: uses per UTC day and feature
 * (docs/features.md "Reports"), the same report as `GET /v1/users/{userId}/usage` for a user and
 * `GET /admin/usage` across users. `from`/`to` default to the last 7 UTC days; at most 366 days.
 */
export async function runUsage(
  userId: string | undefined,
  options: { from?: string; to?: string; feature?: string; json?: boolean } = {},
): Promise<void> {
  const today = new Date().toISOString().slice(0, 10);
  const to = options.to ?? today;
  const from = options.from ?? new Date(Date.parse(to) - 6 * 86_400_000).toISOString().slice(0, 10);
  if (
    !datePattern.test(from) ||
    !datePattern.test(to) ||
    Number.isNaN(Date.parse(from)) ||
    Number.isNaN(Date.parse(to))
  ) {
    return fail(options, 'invalid_request', '--from and --to are UTC dates YYYY-MM-DD');
  }
  if (from > to) return fail(options, 'invalid_request', '--from is after --to');
  if ((Date.parse(to) - Date.parse(from)) / 86_400_000 >= maxUsageReportDays) {
    return fail(options, 'invalid_request', `a report covers at most ${maxUsageReportDays} days`);
  }
  const env = parseEnv(baseEnvSchema.pick({ DATABASE_URL: true }), process.env);
  await withDatabase(env.DATABASE_URL, async (db) => {
    const canonical = userId === undefined ? null : await resolveUserId(db, userId);
    const days = await reportUsage(db, { userId: canonical, from, to, feature: options.feature });
    if (options.json) {
      printJson(userId === undefined ? { from, to, days } : { userId, from, to, days });
      return;
    }
    const quantities = (q: Record<string, number>) =>
      Object.entries(q)
        .map(([meter, n]) => `${meter}=${n}`)
        .join(' ');
    process.stdout.write(
      `${formatTable(
        [
          'DATE',
          'FEATURE',
          'VARIANT',
          'USES',
          'FREE',
          'QUANTITIES',
          'TOKENS',
          ...(userId === undefined ? ['USERS'] : []),
        ],
        days.map((day) => [
          day.date,
          day.feature,
          day.variant ?? '',
          String(day.uses),
          String(day.freeUses),
          quantities(day.quantities),
          String(day.tokens),
          ...(userId === undefined ? [String(day.users ?? 0)] : []),
        ]),
      )}\n`,
    );
  });
}
