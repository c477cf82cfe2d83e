import type { Transaction } from 'kysely';
import { sql } from 'kysely';
import type { DB } from '../db/schema';
import { type IdempotencyClaim, IdempotencyLeaseLostError } from './idempotency-types';

/**
 * Records, in the transaction that committed a step's effects, that the key's request got past
 * it: a retry resumes after the step instead of doing it again. Top-up create: the pending
 * top-up row is committed (`recharge_created`, with its reference). Fenced on the claim's lock
 * token; throws IdempotencyLeaseLostError (roll back) when another attempt holds the key now.
 */
export async function advanceIdempotencyKey(
  trx: Transaction<DB>,
  claim: IdempotencyClaim,
  step: { recoveryPoint: 'recharge_created'; topupReference: string },
): Promise<void> {
  const result = await trx
    .updateTable('idempotency_keys')
    .set({ recovery_point: step.recoveryPoint, topup_reference: step.topupReference, updated_at: sql`now()` })
    .where('id', '=', claim.id)
    .where('lock_token', '=', claim.lockToken)
    .executeTakeFirst();
  if (result.numUpdatedRows === 0n) throw new IdempotencyLeaseLostError(claim.id);
}
