import type { Kysely, Transaction } from 'kysely';
import { sql } from 'kysely';
import type { DB } from '../db/schema';
import { type IdempotencyClaim, IdempotencyLeaseLostError, type IdempotentAnswer } from './idempotency-types';

/**
 * The one decision whether an answer is final, kept under its key and replayed to every retry,
 * or retryable, which leaves the key resumable so the retry runs again: a 5xx (Stripe timed out,
 * the database failed) and an answer the route sent for an error whose `retryable` flag is set
 * (BillingError: `409 topup_not_paid` while the PaymentIntent has not succeeded) are retryable.
 */
export function isFinalAnswer(answer: { status: number; retryable?: boolean | undefined }): boolean {
  // guard: idempotency-final-answer
  return answer.status < 500 && !answer.retryable;
}

/** Only answers below 500 are final, and kept under a key: a 5xx is never replayed. */
export function assertFinalAnswer(answer: IdempotentAnswer): void {
  if (!Number.isInteger(answer.status) || answer.status < 100 || answer.status >= 500) {
    throw new Error(`only answers below 500 are kept under an idempotency key, not ${answer.status}`);
  }
}

/**
 * The one write of a finished key: the answer (final only, assertFinalAnswer), `finished`, the
 * lease freed. Every update that finishes a key sets exactly this (finishIdempotencyKey for a
 * claim, answerAfterConflict for a dead claim a one-transaction request takes over);
 * keptAnswerInsert inserts the same columns for a new key.
 */
export function finishedKey(answer: IdempotentAnswer) {
  assertFinalAnswer(answer);
  return {
    recovery_point: 'finished',
    response_status: answer.status,
    response_body: JSON.stringify(answer.body),
    locked_at: null,
    lock_token: null,
    finished_at: sql<Date>`now()`,
    updated_at: sql<Date>`now()`,
  } as const;
}

/**
 * Keeps a request's answer under its key (`finished`) and frees the lease; every retry replays
 * it from now on. One statement, fenced on the claim's lock token. Given the transaction that
 * commits the request's effects (studio request create, top-up create), the answer is durable
 * exactly when they are; given the pool (routes idempotent on their own), it is written before
 * the answer is sent. Only answers below 500 are final: a 5xx is released (releaseIdempotencyKey).
 * Returns false when another attempt holds the key now; `strict` throws IdempotencyLeaseLostError
 * instead (so a request transaction rolls back).
 */
export async function finishIdempotencyKey(
  db: Kysely<DB> | Transaction<DB>,
  claim: IdempotencyClaim,
  answer: IdempotentAnswer,
  options: { strict?: boolean } = {},
): Promise<boolean> {
  const result = await db
    .updateTable('idempotency_keys')
    .set(finishedKey(answer))
    .where('id', '=', claim.id)
    .where('lock_token', '=', claim.lockToken)
    .executeTakeFirst();
  const finished = result.numUpdatedRows > 0n;
  if (!finished && options.strict) throw new IdempotencyLeaseLostError(claim.id);
  return finished;
}
