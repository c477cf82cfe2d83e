import { randomUUID } from 'node:crypto';
import { sqlMilliseconds } from '@tally/platform/db';
import { type Kysely, sql } from 'kysely';
import type { DB } from '../db/schema';
import type { IdempotencyClaim, IdempotencyKeyVerdict, IdempotentRequestFingerprint } from './idempotency-types';
import { readIdempotencyKeyVerdict } from './stored-idempotency-key';

export type ClaimIdempotencyKeyResult =
  /** Run the request: the key is new, or an earlier attempt failed part way or died (resume from `claim.recoveryPoint`). */
  | { kind: 'execute'; claim: IdempotencyClaim }
  /** Replay the stored answer, 422 for another request, or 409 while an attempt holds the lease. */
  | IdempotencyKeyVerdict;

/**
 * Claims an idempotency key for one attempt of a request, or says why the attempt must not run.
 * One statement (committed asynchronously, see below) for a new key: the insert under the unique (user, key), which is the fence (of
 * concurrent attempts, one inserts; the others wait for its commit, then find the row). An
 * existing unfinished row with the same method, path and body whose lease is free or older than
 * `lockTimeoutMs` (an attempt that failed part way released it; one that died let it expire) is
 * taken over in the same statement, with a new lock token. Otherwise the row is read and
 * classified: finished → replay, different request → reused, leased → in-use.
 * Idempotent in effect: claiming never changes a finished key. Throws only database errors.
 */
export async function claimIdempotencyKey(
  db: Kysely<DB>,
  request: IdempotentRequestFingerprint,
  options: { lockTimeoutMs: number },
): Promise<ClaimIdempotencyKeyResult> {
  // A row pruned between the statements is claimed afresh on the next pass.
  for (let pass = 0; pass < 3; pass += 1) {
    const lockToken = randomUUID();
    const claimed = await db
      .insertInto('idempotency_keys')
      .columns([
        'user_id',
        'idempotency_key',
        'request_method',
        'request_path',
        'request_hash',
        'locked_at',
        'lock_token',
      ])
      // The claim commits without waiting for its WAL flush (synchronous_commit off for this one
      // statement's transaction): it needs no durability of its own. Whatever the request commits
      // afterwards commits synchronously, and that flush covers the earlier claim; a claim lost to
      // a Postgres crash had nothing committed after it, so its retry rightly starts afresh.
      .expression(
        sql`SELECT ${request.userId}, ${request.key}, ${request.method}, ${request.path}, ${request.requestHash}, now(), ${lockToken}::uuid
              FROM (SELECT set_config('synchronous_commit', 'off', true)) AS durability`,
      )
      .onConflict((conflict) =>
        conflict
          .columns(['user_id', 'idempotency_key'])
          .doUpdateSet({ locked_at: sql`now()`, lock_token: lockToken, updated_at: sql`now()` })
          .where('idempotency_keys.recovery_point', '<>', 'finished')
          .whereRef('idempotency_keys.request_method', '=', 'excluded.request_method')
          .whereRef('idempotency_keys.request_path', '=', 'excluded.request_path')
          .whereRef('idempotency_keys.request_hash', '=', 'excluded.request_hash')
          .where((eb) =>
            eb.or([
              // guard: idempotency-lease
              eb('idempotency_keys.locked_at', 'is', null),
              eb('idempotency_keys.locked_at', '<', sql<Date>`now() - ${sqlMilliseconds(options.lockTimeoutMs)}`),
            ]),
          ),
      )
      .returning(['id', 'recovery_point', 'topup_reference', sql<boolean>`xmax = 0`.as('inserted')])
      .executeTakeFirst();
    if (claimed) {
      if (claimed.recovery_point === 'finished') throw new Error('a finished idempotency key was claimed');
      return {
        kind: 'execute',
        claim: {
          id: claimed.id,
          lockToken,
          recoveryPoint: claimed.recovery_point,
          topupReference: claimed.topup_reference,
          resumed: !claimed.inserted,
        },
      };
    }
    const verdict = await readIdempotencyKeyVerdict(db, request);
    if (verdict) return verdict;
  }
  return { kind: 'in-use' };
}
