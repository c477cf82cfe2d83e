import { randomUUID } from 'node:crypto';
import {
  type AppWebhookOutbox,
  type DB,
  type GrantResult,
  grantTokens,
  handOffCommitted,
  openUnitOfWork,
  references,
  resolveUserId,
  type UnitOfWork,
  type VoidLotResult,
  voidLot,
} from '@tally/billing-core';
import type { Kysely } from 'kysely';
import { z } from 'zod';
import type { AuditAnswer, AuditedTransaction } from '../../http/audit-admin-actions';
import type { adminGrantBodySchema } from '../../http/grant-body';

export interface LotActionDeps {
  db: Kysely<DB>;
  outbox: AppWebhookOutbox;
}

/**
 * Support's grant (admin API and console): a promotional lot under `admin:grant:{reference}` (a
 * generated reference when none is given), for the canonical user of the path's id, in one
 * transaction with the request's audit row; its wallet.credited is handed off after the commit.
 */
export async function runAdminGrant(
  audited: AuditedTransaction,
  deps: LotActionDeps,
  request: { userId: string; body: z.output<typeof adminGrantBodySchema> },
  answerOf: (result: GrantResult) => AuditAnswer,
): Promise<GrantResult> {
  const reference = request.body.reference ?? `support-${randomUUID()}`;
  let uow: UnitOfWork | undefined;
  const result = await audited(async (trx) => {
    uow = openUnitOfWork(trx, deps.outbox);
    return grantTokens(uow, {
      userId: await resolveUserId(trx, request.userId),
      reference: references.adminGrant(reference),
      amount: request.body.amount,
      reason: request.body.reason ?? 'admin_grant',
      expiresAt: request.body.expiresAt ?? null,
      settlesDebt: request.body.settlesDebt ?? false,
    });
  }, answerOf);
  await handOffCommitted(deps.outbox, uow);
  return result;
}

/** Support's void of one lot (admin API and console), in one transaction with its audit row. */
export async function runLotVoid(
  audited: AuditedTransaction,
  deps: LotActionDeps,
  request: { userId: string; lotId: number },
  answerOf: (result: VoidLotResult) => AuditAnswer,
): Promise<VoidLotResult> {
  let uow: UnitOfWork | undefined;
  const result = await audited(async (trx) => {
    uow = openUnitOfWork(trx, deps.outbox);
    return voidLot(uow, {
      userId: await resolveUserId(trx, request.userId),
      lotId: request.lotId,
    });
  }, answerOf);
  await handOffCommitted(deps.outbox, uow);
  return result;
}

export const voidAnswerSchema = z.strictObject({
  lotId: z.number().int(),
  ledgerReference: z.string(),
  taken: z.number().int().describe('tokens taken back (0 when the lot had none left)'),
  balance: z.number().int(),
  alreadyVoided: z.boolean(),
});

/** The HTTP answer of a void: 200 with what it took (on a repeat, what came back since), 404 for no such lot. */
export function voidAnswerOf(result: VoidLotResult): AuditAnswer {
  if (result.kind === 'not-found') {
    return { statusCode: 404, body: { error: { code: 'not_found', message: 'no such lot for this user' } } };
  }
  const body: z.input<typeof voidAnswerSchema> = { ...result.answer, alreadyVoided: result.kind === 'already-voided' };
  return { statusCode: 200, body };
}
