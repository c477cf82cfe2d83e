import { type Kysely, sql, type Transaction } from 'kysely';
import type { DB } from '../db/schema';
import type { IdempotencyKeyVerdict, IdempotentRequestFingerprint } from './idempotency-types';

/**
 * A request's stored key, as storedKeyColumns classifies it: `absent` (no row), `reused` (another
 * method, path or body), `replay` (finished), `leased` (unfinished, an attempt's lease runs) or
 * `free` (unfinished, its lease released or expired: the request may run).
 */
export interface StoredIdempotencyKey {
  state: 'absent' | 'reused' | 'replay' | 'leased' | 'free';
  response_status: number | null;
  response_body: string | null;
}

/** The columns of StoredIdempotencyKey, from `k`: storedKeyJoin, LEFT JOINed. */
function storedKeyColumns(request: IdempotentRequestFingerprint, lockTimeoutMs: number) {
  return sql`CASE
      WHEN k.id IS NULL THEN 'absent'
      WHEN k.request_method <> ${request.method} OR k.request_path <> ${request.path}
        OR k.request_hash <> ${request.requestHash} THEN 'reused'
      WHEN k.recovery_point = 'finished' THEN 'replay'
      WHEN k.locked_at >= now() - ${lockTimeoutMs} * interval '1 millisecond' THEN 'leased'
      ELSE 'free' END AS state, k.response_status, k.response_body`;
}

/** `idempotency_keys k` on the request's (user, key), for a LEFT JOIN. */
function storedKeyJoin(request: IdempotentRequestFingerprint) {
  return sql`idempotency_keys k ON k.user_id = ${request.userId} AND k.idempotency_key = ${request.key}`;
}

/**
 * What a stored key says about a request: the answer instead of running it, or undefined when
 * the request may run (`runnable`: nothing else holds the key, and the row is absent or free).
 */
export function verdictOf(stored: StoredIdempotencyKey, runnable: false): IdempotencyKeyVerdict;
export function verdictOf(stored: StoredIdempotencyKey, runnable: boolean): IdempotencyKeyVerdict | undefined;
export function verdictOf(stored: StoredIdempotencyKey, runnable: boolean): IdempotencyKeyVerdict | undefined {
  switch (stored.state) {
    case 'reused':
      return { kind: 'reused' };
    case 'replay':
      return { kind: 'replay', status: Number(stored.response_status), bodyJson: String(stored.response_body) };
    case 'leased':
      return { kind: 'in-use' };
    default:
      return runnable ? undefined : { kind: 'in-use' };
  }
}

/** Reads and classifies the request's stored key (one statement, no lock). */
export async function readStoredIdempotencyKey(
  db: Kysely<DB> | Transaction<DB>,
  request: IdempotentRequestFingerprint,
  lockTimeoutMs: number,
): Promise<StoredIdempotencyKey> {
  const { rows } = await sql<StoredIdempotencyKey>`
    SELECT ${storedKeyColumns(request, lockTimeoutMs)} FROM (SELECT) AS one LEFT JOIN ${storedKeyJoin(request)}`.execute(
    db,
  );
  const [stored] = rows;
  if (!stored) throw new Error('the stored idempotency key read returned no row');
  return stored;
}
