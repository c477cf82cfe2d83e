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

/**
 * The attempt no longer holds the key's lease (another attempt took it over after it expired):
 * its transaction must roll back, since the other attempt runs the request now.
 */
export class IdempotencyLeaseLostError extends BillingError {
  constructor(keyId: number) {
    super('idempotency_key_in_use', `idempotency key ${keyId} is run by another attempt`, { retryable: true });
  }
}
