import { sqlMilliseconds } from '@tally/platform/db';
import { type Kysely, type RawBuilder, sql, type Transaction } from 'kysely';
import { IDEMPOTENCY_KEY_LOCK_NAMESPACE } from '../db/advisory-locks';
import type { DB } from '../db/schema';
import { assertFinalAnswer, finishedKey } from './finish-idempotency-key';
import {
  AnsweredByIdempotencyKeyError,
  type IdempotencyKeyVerdict,
  type IdempotentAnswer,
  type IdempotentRequestKey,
} from './idempotency-types';
import { readIdempotencyKeyVerdict } from './stored-idempotency-key';

/**
 * The first statement of a one-transaction request with an `Idempotency-Key`, in the place of the
 * request's first lock (no round trip of its own): a try-lock on (user, key) for the transaction,
 * so a concurrent attempt of the key is refused at once instead of waiting for this one, and,
 * only once it is taken, `thenLock` (the lock the request takes first, e.g. the studio user
 * lock, which may wait). The stored key is not read here: a used key is found by the insert of
 * the answer (keptAnswerInsert, the fence) and answers then (answerAfterConflict), so a new key,
 * the common case, pays for no look-up. Throws AnsweredByIdempotencyKeyError (the caller's
 * transaction rolls back, nothing written) when another transaction holds the key: 409, or the
 * stored answer if the key is finished (a retry racing another retry of a finished key).
 */
export async function takeIdempotencyKeyInTransaction(
  trx: Transaction<DB>,
  key: IdempotentRequestKey,
  options: { thenLock?: RawBuilder<unknown> } = {},
): Promise<void> {
  const { request } = key;
  // A user id may hold spaces, a key may not: "<user> <key>" names one pair. The subquery with
  // the volatile try-lock is evaluated once (Postgres does not pull it up), before the CASE.
  // guard: studio-key-try-lock
  const { rows } = await sql<{ acquired: boolean }>`
    SELECT attempt.acquired, CASE WHEN attempt.acquired THEN ${options.thenLock ?? sql`NULL`} END AS then_locked
      FROM (SELECT pg_try_advisory_xact_lock(${IDEMPOTENCY_KEY_LOCK_NAMESPACE},
                                             hashtext(${request.userId} || ' ' || ${request.key})) AS acquired) AS attempt`.execute(
    trx,
  );
  if (rows[0]?.acquired) return;
  throw new AnsweredByIdempotencyKeyError((await readIdempotencyKeyVerdict(trx, request)) ?? { kind: 'in-use' });
}

/**
 * The finished key, `answer` under the request's (user, key): an insert for a data-modifying CTE
 * of the statement that writes the request's effects (`WITH kept AS (…)`), or to run alone. It
 * returns the key's id when it wrote it, and no row when a key stands under (user, key) already:
 * the unique index is the fence (a conflict with an uncommitted key waits for its transaction).
 * Then answerAfterConflict says what to do. SQL text rather than the query builder: it runs with
 * every keyed request, and building it costs more than the text.
 */
export function keptAnswerInsert(key: IdempotentRequestKey, answer: IdempotentAnswer): RawBuilder<{ id: number }> {
  assertFinalAnswer(answer);
  const { request } = key;
  return sql<{ id: number }>`INSERT INTO idempotency_keys (user_id, idempotency_key, request_method, request_path,
        request_hash, recovery_point, response_status, response_body, finished_at)
      VALUES (${request.userId}, ${request.key}, ${request.method}, ${request.path}, ${request.requestHash},
        'finished', ${answer.status}, ${JSON.stringify(answer.body)}, now())
      ON CONFLICT (user_id, idempotency_key) DO NOTHING
      RETURNING id`;
}

/**
 * After keptAnswerInsert met a stored key (in the request's transaction, or alone): a key left
 * unfinished by a claim (another route's, or a studio claim of the claim-first version during a
 * rolling deploy) for the same request with its lease free or expired is taken over and finished
 * with `answer`, fenced as claimIdempotencyKey's take-over is (`kept`: go on, it commits with the
 * effects); any other key answers instead (replay, 422, 409), read once the take-over found
 * nothing to take. Two statements, on this path only.
 */
export async function answerAfterConflict(
  db: Kysely<DB> | Transaction<DB>,
  key: IdempotentRequestKey,
  answer: IdempotentAnswer,
): Promise<'kept' | IdempotencyKeyVerdict> {
  const { request } = key;
  const takenOver = await db
    .updateTable('idempotency_keys')
    .set(finishedKey(answer))
    .where('user_id', '=', request.userId)
    .where('idempotency_key', '=', request.key)
    .where('recovery_point', '<>', 'finished')
    .where('request_method', '=', request.method)
    .where('request_path', '=', request.path)
    .where('request_hash', '=', request.requestHash)
    .where((eb) =>
      eb.or([
        // guard: studio-key-lease
        eb('locked_at', 'is', null),
        eb('locked_at', '<', sql<Date>`now() - ${sqlMilliseconds(key.lockTimeoutMs)}`),
      ]),
    )
    .returning('id')
    .executeTakeFirst();
  if (takenOver) return 'kept';
  // No key at all: it was pruned since the conflict; the retry runs afresh.
  return (await readIdempotencyKeyVerdict(db, request)) ?? { kind: 'in-use' };
}

/**
 * Keeps an answer the request's transaction did not commit (a refusal before or after it: 400,
 * 402): `kept`, or, when another attempt's key stands, what that key says.
 */
export async function keepIdempotentAnswer(
  db: Kysely<DB>,
  key: IdempotentRequestKey,
  answer: IdempotentAnswer,
): Promise<'kept' | IdempotencyKeyVerdict> {
  if ((await keptAnswerInsert(key, answer).execute(db)).rows.length > 0) return 'kept';
  return answerAfterConflict(db, key, answer);
}
