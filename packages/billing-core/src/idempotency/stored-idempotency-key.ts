import type { Kysely, Transaction } from 'kysely';
import type { DB } from '../db/schema';
import type { IdempotencyKeyVerdict, IdempotentRequestFingerprint } from './idempotency-types';

/**
 * What the key stored under the request's (user, key) says about a request that may not run it
 * (its claim or its insert of the answer met that key): the stored answer once it is finished,
 * 422 for another method, path or body, and 409 while it is unfinished (an attempt runs it).
 * Undefined when no key is stored (pruned in between). One statement, no lock.
 */
export async function readIdempotencyKeyVerdict(
  db: Kysely<DB> | Transaction<DB>,
  request: IdempotentRequestFingerprint,
): Promise<IdempotencyKeyVerdict | undefined> {
  const stored = await db
    .selectFrom('idempotency_keys')
    .select(['request_method', 'request_path', 'request_hash', 'recovery_point', 'response_status', 'response_body'])
    .where('user_id', '=', request.userId)
    .where('idempotency_key', '=', request.key)
    .executeTakeFirst();
  if (!stored) return undefined;
  if (
    stored.request_method !== request.method ||
    stored.request_path !== request.path ||
    stored.request_hash !== request.requestHash
  ) {
    return { kind: 'reused' };
  }
  if (stored.recovery_point === 'finished' && stored.response_status !== null && stored.response_body !== null) {
    return { kind: 'replay', status: stored.response_status, bodyJson: stored.response_body };
  }
  return { kind: 'in-use' };
}
