import type { IdempotencyRecoveryPoint } from '../db/schema';
import { BillingError } from '../errors';

/**
 * The lease one attempt of a request holds on its idempotency key (claimIdempotencyKey). Every
 * write the attempt makes to the key is fenced on `lockToken`: once another attempt took the
 * lease over (after it expired), this one can neither advance nor finish the key.
 */
export interface IdempotencyClaim {
  id: number;
  lockToken: string;
  /** Where the attempt starts: `started` for a new key, an earlier attempt's point for a resumed one. */
  recoveryPoint: Exclude<IdempotencyRecoveryPoint, 'finished'>;
  /** The top-up an earlier attempt committed (recovery point `recharge_created`). */
  topupReference: string | null;
  /** True when an earlier attempt of the key failed part way or died, and this one resumes it. */
  resumed: boolean;
}

/** An answer as it is kept and replayed: HTTP status (below 500) and the JSON body. */
export interface IdempotentAnswer {
  status: number;
  body: unknown;
}

/**
 * A request's claim with how to render its answer from the use case's result, for use cases
 * that store the answer in the transaction that commits their effects (studio request create,
 * top-up create): the answer is then durable exactly when the effects are.
 */
export interface IdempotencyBinding<Result> {
  claim: IdempotencyClaim;
  answer: (result: Result) => IdempotentAnswer;
}

/** Who sent which request under a key: what a key is looked up and compared by. */
export interface IdempotentRequestFingerprint {
  /**
   * The user id as the request's path names it, not its canonical user: a link made between a
   * request and its retry (the id becomes another user's alias) must not make the retry a new key.
   */
  userId: string;
  key: string;
  method: string;
  path: string;
  /** fingerprintRequestBody of the body. */
  requestHash: string;
}

/** Why a request must not run, as its key says: replay the stored answer, 422, or 409. */
export type IdempotencyKeyVerdict =
  /** The request ran to an answer before: send it again (the JSON text as first sent), change nothing. */
  | { kind: 'replay'; status: number; bodyJson: string }
  /** The key was first used with another method, path or body. */
  | { kind: 'reused' }
  /** Another attempt of the request is running it now. */
  | { kind: 'in-use' };

/**
 * A request's key for a use case that is one transaction (studio request create): nothing is
 * claimed before it. The transaction takes the key's try-lock in its first statement
 * (takeIdempotencyKeyInTransaction) and writes the finished key, `answer(result)`, with its
 * effects (keptAnswerInsert); the unique (user, key) is the fence.
 */
export interface IdempotencyInTransaction<Result> extends IdempotentRequestKey {
  answer: (result: Result) => IdempotentAnswer;
}

/** A request's key as IdempotencyInTransaction's statements look it up. */
export interface IdempotentRequestKey {
  request: IdempotentRequestFingerprint;
  /** IDEMPOTENCY_KEY_LOCK_TIMEOUT_MS: a claim (another route, an earlier version) older than this is taken over. */
  lockTimeoutMs: number;
}

/**
 * The key answers the request instead of this attempt (IdempotencyInTransaction): thrown inside
 * the transaction, which rolls back having changed nothing; the use case catches it outside the
 * transaction and returns `verdict` (createStudioRequest's `answered-by-key`), so no caller sees it.
 */
export class AnsweredByIdempotencyKeyError extends Error {
  constructor(readonly verdict: IdempotencyKeyVerdict) {
    super(`the request's idempotency key answers it (${verdict.kind})`);
    this.name = new.target.name;
  }
}

/**
 * The attempt no longer holds the key's lease (another attempt took it over after it expired):
 * its transaction must roll back, since the other attempt runs the request now.
 */
export class IdempotencyLeaseLostError extends BillingError {
  constructor(keyId: number) {
    super('idempotency_key_in_use', `idempotency key ${keyId} is run by another attempt`, { retryable: true });
  }
}
