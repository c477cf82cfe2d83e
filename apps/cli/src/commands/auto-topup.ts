import {
  type AutoTopupAttemptView,
  type AutoTopupView,
  adminActions,
  disableAutoTopup,
  listAutoTopupAttempts,
  openUnitOfWork,
  readAutoTopup,
  resolveUserId,
  runAuditedAction,
} from '@tally/billing-core';
import { baseEnvSchema, parseEnv } from '@tally/platform';
import { cliAuditRecord } from './audit-cli-action';
import { printJson } from './output';
import { withDatabase } from './unreachable-server';
import { formatTable } from './user';

/**
 * `tally autotopup <userId> [--disable --note n]` (issue 59): a user's auto top-up settings, saved
 * card and newest attempts, as `GET /admin/users/{userId}/auto-topup` answers them; with
 * --disable turns it off first, as `POST …/auto-topup/disable` does: `disableAutoTopup` for the
 * canonical user, its audit row (surface cli, `auto_topup.disable`, with the note) in the same
 * transaction. Its `wallet.auto_topup_disabled` message is written there and left to the relay
 * (the CLI hands nothing to the queue).
 */
export async function runAutoTopup(
  userId: string,
  options: { disable?: boolean; note?: string; json?: boolean } = {},
): Promise<void> {
  const env = parseEnv(baseEnvSchema.pick({ DATABASE_URL: true }), process.env);
  await withDatabase(env.DATABASE_URL, async (db) => {
    let disabled: boolean | undefined;
    if (options.disable) {
      const audited = await runAuditedAction(
        db,
        async (trx) =>
          disableAutoTopup(
            openUnitOfWork(trx, { lowBalanceThreshold: undefined, handOff: undefined }),
            await resolveUserId(trx, userId),
          ),
        (disabled) =>
          cliAuditRecord({
            action: adminActions.autoTopupDisable,
            target: { kind: 'user', id: userId },
            request: { params: { userId }, body: { note: options.note } },
            outcome: 'ok',
            answer: { userId, disabled },
          }),
      );
      disabled = audited.result;
    }
    const canonical = await resolveUserId(db, userId);
    const view = await readAutoTopup(db, canonical);
    const attempts = await listAutoTopupAttempts(db, canonical);
    if (options.json) {
      printJson({ ...(disabled === undefined ? {} : { disabled }), autoTopup: { ...view, userId }, attempts });
      return;
    }
    const said =
      disabled === true
        ? 'disabled auto top-up\n'
        : disabled === false
          ? 'auto top-up was already off; nothing changed\n'
          : '';
    process.stdout.write(`${said}${describe(userId, view, attempts)}`);
  });
}

function describe(userId: string, view: AutoTopupView, attempts: AutoTopupAttemptView[]): string {
  const state = view.enabled
    ? 'enabled'
    : view.disabledReason !== null
      ? `disabled (reason ${view.disabledReason})`
      : view.packId === null
        ? 'not set'
        : 'disabled by the app';
  const card = view.paymentMethod;
  const lines = [
    `auto top-up of ${userId}: ${state}`,
    `  pack ${view.packId ?? '-'}, threshold ${view.threshold ?? '-'}, this month ${view.thisMonth} of ${view.monthlyLimit ?? '-'}, failures in a row ${view.failuresInARow}`,
    `  card ${card ? `${card.id} of customer ${card.customerId}, saved ${card.savedAt}` : 'none'}`,
    '',
    attempts.length === 0
      ? 'attempts: none'
      : formatTable(
          [
            'ATTEMPT',
            'STATUS',
            'AVAILABLE AFTER / THRESHOLD',
            'PAYMENT INTENT',
            'FAILURE CODE',
            'REQUIRES ACTION',
            'TRIES',
            'CREATED',
            'FINISHED',
          ],
          attempts.map((attempt) => [
            attempt.id,
            attempt.status,
            `${attempt.availableAfter} / ${attempt.threshold}`,
            attempt.paymentIntentId ?? '-',
            attempt.failureCode ?? '-',
            attempt.requiresAction ? 'yes' : 'no',
            String(attempt.tries),
            attempt.createdAt,
            attempt.finishedAt ?? '-',
          ]),
        ),
  ];
  return `${lines.join('\n')}\n`;
}
