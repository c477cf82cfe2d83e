import {
  adminActions,
  readSpendLimits,
  resolveUserId,
  runAuditedAction,
  type SpendLimitsChange,
  type SpendLimitsView,
  type SpendPeriodView,
  setSpendLimits,
} from '@tally/billing-core';
import { baseEnvSchema, parseEnv, spendLimitSetting } from '@tally/platform';
import { cliAuditRecord } from './audit-cli-action';
import { printJson } from './output';
import { withDatabase } from './unreachable-server';

export const limitsEnvSchema = baseEnvSchema
  .pick({ DATABASE_URL: true })
  .extend({ SPEND_LIMIT_DAILY: spendLimitSetting, SPEND_LIMIT_MONTHLY: spendLimitSetting });

/**
 * `tally limits <userId> [--daily n|default] [--monthly n|default]` (docs/spend-limits.md): shows
 * a user's spend limits (the limits in force with SPEND_LIMIT_DAILY/MONTHLY of this environment as
 * the defaults, what was spent, when each resets); with --daily or --monthly sets the user's own
 * first, as `PUT /admin/users/{userId}/limits` does (`default` removes it), in one transaction with
 * its audit row (surface cli, `spend_limits.set`).
 */
export async function runLimits(
  userId: string,
  options: { daily?: number | 'default'; monthly?: number | 'default'; note?: string; json?: boolean } = {},
): Promise<void> {
  const env = parseEnv(limitsEnvSchema, process.env);
  const defaults = { daily: env.SPEND_LIMIT_DAILY ?? null, monthly: env.SPEND_LIMIT_MONTHLY ?? null };
  const limitOf = (value: number | 'default' | undefined) => (value === 'default' ? null : value);
  const change: SpendLimitsChange = { daily: limitOf(options.daily), monthly: limitOf(options.monthly) };
  const setting = options.daily !== undefined || options.monthly !== undefined;
  await withDatabase(env.DATABASE_URL, async (db) => {
    const set = async (): Promise<SpendLimitsView> => {
      const audited = await runAuditedAction(
        db,
        async (trx) => setSpendLimits(trx, await resolveUserId(trx, userId), change, defaults),
        (view) =>
          cliAuditRecord({
            action: adminActions.spendLimitsSet,
            target: { kind: 'user', id: userId },
            request: { params: { userId }, body: { ...change, note: options.note } },
            outcome: 'ok',
            answer: view,
          }),
      );
      return audited.result;
    };
    const view = setting ? await set() : await readSpendLimits(db, await resolveUserId(db, userId), defaults);
    if (options.json) {
      printJson({ ...view, userId });
      return;
    }
    process.stdout.write(`${setting ? 'set: ' : ''}${describe(userId, view)}`);
  });
}

function describe(userId: string, view: SpendLimitsView): string {
  const line = (name: string, period: SpendPeriodView) =>
    `  ${name.padEnd(8)} limit ${period.limit ?? 'none'} (${period.source}), spent ${period.spent}, resets ${period.resetsAt}\n`;
  return `spend limits of ${userId} (held by active holds: ${view.held})\n${line('daily', view.daily)}${line('monthly', view.monthly)}`;
}
