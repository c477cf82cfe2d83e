import { type Kysely, type QueryCreator, type RawBuilder, sql, type Transaction } from 'kysely';
import { IDEMPOTENCY_KEY_LOCK_NAMESPACE } from '../db/advisory-locks';
import type { DB } from '../db/schema';
import { assertFinalAnswer } from './finish-idempotency-key';
import {
  AnsweredByIdempotencyKeyError,
  type IdempotencyKeyVerdict,
  type IdempotentAnswer,
  type IdempotentRequestKey,
} from './idempotency-types';
import {
  readStoredIdempotencyKey,
  type StoredIdempotencyKey,
  storedKeyColumns,
  storedKeyJoin,
  verdictOf,
} from './stored-idempotency-key';

/**
 * The first statement of a one-transaction request with an `Idempotency-Key` (no round trip of
 * its own: it takes the place of the request's first lock). In one statement: a try-lock on
 * (user, key) for the transaction, so a concurrent attempt of the key is refused at once (409)
 * instead of waiting for this one; the stored key, if any; and, only when the request is to run,
 * `thenLock` (the lock the request would take first, e.g. the studio user lock, which may wait).
 * Throws AnsweredByIdempotencyKeyError (the caller's transaction rolls back, nothing written)
 * when the key answers instead: the stored answer, 422 for another request, 409 while another
 * attempt holds the key. The row is read with the statement's snapshot, which may predate the
 * commit of an attempt that released the try-lock just before this one took it: that attempt's
 * key is then not seen here, and keptAnswerInsert's unique (user, key) refuses this one at the
 * end. The check is the fast path; the unique index is the fence.
 */
export async function checkIdempotencyKeyInTransaction(
  trx: Transaction<DB>,
  key: IdempotentRequestKey,
  options: { thenLock?: RawBuilder<unknown> } = {},
): Promise<void> {
  const { request } = key;
  // A user id may hold spaces, a key may not: "<user> <key>" names one pair.
  const { rows } = await sql<StoredIdempotencyKey & { acquired: boolean }>`
    WITH attempt AS MATERIALIZED (
      SELECT pg_try_advisory_xact_lock(${IDEMPOTENCY_KEY_LOCK_NAMESPACE}, hashtext(${request.userId} || ' ' || ${request.key})) AS acquired),
    stored AS MATERIALIZED (
      SELECT attempt.acquired, ${storedKeyColumns(request, key.lockTimeoutMs)}
        FROM attempt LEFT JOIN ${storedKeyJoin(request)})
    SELECT stored.*,
           CASE WHEN stored.acquired AND stored.state IN ('absent', 'free') THEN ${options.thenLock ?? sql`NULL`} END AS then_locked
      FROM stored`.execute(trx);
  const [stored] = rows;
  if (!stored) throw new Error('the idempotency key check returned no row');
  const verdict = verdictOf(stored, stored.acquired);
  if (verdict) throw new AnsweredByIdempotencyKeyError(verdict);
}

/**
 * The finished key, `answer` under the request's (user, key), as an insert for a data-modifying
 * CTE of the statement that writes the request's effects (or to run alone): it returns the key's
 * id when it wrote it, and no row when another attempt's key stands (the unique (user, key):
 * the conflict waits for that attempt's transaction, then refuses this one). A key left
 * unfinished by a claim (another route's, an earlier version's) with the same request and its
 * lease free or expired is taken over, as claimIdempotencyKey does.
 */
export function keptAnswerInsert(db: QueryCreator<DB>, key: IdempotentRequestKey, answer: IdempotentAnswer) {
  assertFinalAnswer(answer);
  const { request } = key;
  return db
    .insertInto('idempotency_keys')
    .values({
      user_id: request.userId,
      idempotency_key: request.key,
      request_method: request.method,
      request_path: request.path,
      request_hash: request.requestHash,
      recovery_point: 'finished',
      response_status: answer.status,
      response_body: JSON.stringify(answer.body),
      finished_at: sql`now()`,
    })
    .onConflict((conflict) =>
      conflict
        .columns(['user_id', 'idempotency_key'])
        .doUpdateSet({
          recovery_point: 'finished',
          response_status: (eb) => eb.ref('excluded.response_status'),
          response_body: (eb) => eb.ref('excluded.response_body'),
          locked_at: null,
          lock_token: null,
          finished_at: sql`now()`,
          updated_at: sql`now()`,
        })
        .where('idempotency_keys.recovery_point', '<>', 'finished')
        .whereRef('idempotency_keys.request_method', '=', 'excluded.request_method')
        .whereRef('idempotency_keys.request_path', '=', 'excluded.request_path')
        .whereRef('idempotency_keys.request_hash', '=', 'excluded.request_hash')
        .where((eb) =>
          eb.or([
            eb('idempotency_keys.locked_at', 'is', null),
            eb('idempotency_keys.locked_at', '<', sql<Date>`now() - ${key.lockTimeoutMs} * interval '1 millisecond'`),
          ]),
        ),
    )
    .returning('id');
}

/**
 * Keeps an answer the request's transaction did not commit (a refusal before or after it: 400,
 * 402), one statement: `kept`, or, when another attempt's key stands, what that key says.
 */
export async function keepIdempotentAnswer(
  db: Kysely<DB>,
  key: IdempotentRequestKey,
  answer: IdempotentAnswer,
): Promise<'kept' | IdempotencyKeyVerdict> {
  if (await keptAnswerInsert(db, key, answer).executeTakeFirst()) return 'kept';
  return verdictOf(await readStoredIdempotencyKey(db, key.request, key.lockTimeoutMs), false);
}
