import { randomUUID } from 'node:crypto';
import {
  adminActions,
  type GrantResult,
  grantTokens,
  openUnitOfWork,
  references,
  resolveUserId,
  runAuditedAction,
} from '@tally/billing-core';
import { baseEnvSchema, parseEnv } from '@tally/platform';
import { cliAuditRecord } from './audit-cli-action';
import { fail, printJson } from './output';
import { withDatabase } from './unreachable-server';

export interface GrantOptions {
  reference?: string;
  expiresAt?: Date;
  note?: string;
  json?: boolean;
}

/**
 * `tally grant <userId> <amount>`: support's grant of promotional tokens (docs/lots.md "Grants"),
 * like `POST /admin/users/{userId}/grants`: a lot under `admin:grant:{reference}` (generated when
 * not given), its audit row (surface cli) in the grant's transaction. Its wallet.credited is left
 * to the relay (the CLI hands nothing to the queue).
 */
export async function runGrant(userId: string, amount: number, options: GrantOptions = {}): Promise<void> {
  const env = parseEnv(baseEnvSchema.pick({ DATABASE_URL: true }), process.env);
  const reference = options.reference ?? `cli-${randomUUID()}`;
  await withDatabase(env.DATABASE_URL, async (db) => {
    const { result } = await runAuditedAction(
      db,
      async (trx): Promise<GrantResult> =>
        grantTokens(openUnitOfWork(trx, { lowBalanceThreshold: undefined, handOff: undefined }), {
          userId: await resolveUserId(trx, userId),
          reference: references.adminGrant(reference),
          amount,
          reason: 'admin_grant',
          expiresAt: options.expiresAt ?? null,
        }),
      (result) =>
        cliAuditRecord({
          action: adminActions.userGrant,
          target: { kind: 'user', id: userId },
          request: {
            params: { userId },
            body: { amount, reference, expiresAt: options.expiresAt, note: options.note },
          },
          outcome: result.kind === 'conflict' ? 'reference_conflict' : 'ok',
          answer:
            result.kind === 'conflict'
              ? { error: { code: 'reference_conflict', message: result.message } }
              : result.answer,
        }),
    );
    if (result.kind === 'conflict') {
      fail(options, 'reference_conflict', result.message);
      return;
    }
    if (options.json) {
      printJson({ ...result.answer, alreadyGranted: result.kind === 'already-granted' });
      return;
    }
    const { answer } = result;
    process.stdout.write(
      result.kind === 'granted'
        ? `granted ${answer.amount} to ${userId} (lot ${answer.lotId}, ${answer.ledgerReference}, expires ${answer.expiresAt ?? 'never'}); balance ${answer.balance}\n`
        : `already granted under ${answer.ledgerReference} (lot ${answer.lotId}); nothing more granted\n`,
    );
  });
}
