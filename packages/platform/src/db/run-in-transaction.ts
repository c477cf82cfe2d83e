import type { Kysely, Transaction } from 'kysely';

/** What a unit of work decided about its writes; the value goes back to the caller either way. */
export type TransactionDecision<T> = { kind: 'commit'; value: T } | { kind: 'rollback'; value: T };

export const commitWith = <T>(value: T): TransactionDecision<T> => ({ kind: 'commit', value });
export const rollbackWith = <T>(value: T): TransactionDecision<T> => ({ kind: 'rollback', value });

/**
 * Runs `work` in one transaction and commits or rolls back as it decides, so that undoing
 * everything it wrote is a returned value rather than an exception thrown by `work` to escape
 * Kysely's `transaction().execute`. A throw from `work` rolls back and is rethrown, as there; so
 * is a failed COMMIT (rolled back first, as Kysely does) or ROLLBACK (a lost connection).
 *
 * Built on `transaction().execute` rather than `startTransaction()`: the controlled transaction
 * costs about three times the CPU to open and close, and this runs once per inbox event. A
 * rollback decision leaves it as a private value thrown past Kysely (not an Error: no stack is
 * captured), which rolls back and is turned back into the decision's value here.
 */
export async function runInTransaction<DB, T>(
  db: Kysely<DB>,
  work: (trx: Transaction<DB>) => Promise<TransactionDecision<T>>,
): Promise<T> {
  try {
    return await db.transaction().execute(async (trx) => {
      const decision = await work(trx);
      // guard: rollback-decision
      if (decision.kind === 'rollback') throw new RollbackDecided(decision.value);
      return decision.value;
    });
  } catch (thrown) {
    if (thrown instanceof RollbackDecided) return thrown.value as T;
    throw thrown;
  }
}

/** A rollback decision on its way past Kysely's transaction (which rolls back on any throw). */
class RollbackDecided {
  constructor(readonly value: unknown) {}
}
