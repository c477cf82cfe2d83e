import type { Kysely, Transaction } from 'kysely';
import type { DB } from './schema';

/** What a unit of work decided about its writes; the value goes back to the caller either way. */
export type TransactionDecision<T> = { kind: 'commit'; value: T } | { kind: 'rollback'; value: T };

export const commitWith = <T>(value: T): TransactionDecision<T> => ({ kind: 'commit', value });
export const rollbackWith = <T>(value: T): TransactionDecision<T> => ({ kind: 'rollback', value });

/**
 * Runs `work` in one transaction and commits or rolls back as it decides, so that undoing
 * everything it wrote is a returned value rather than an exception thrown to escape Kysely's
 * `transaction().execute`. A throw from `work` rolls back and is rethrown, as there; so is a
 * failed COMMIT or ROLLBACK (a lost connection).
 */
export async function runInTransaction<T>(
  db: Kysely<DB>,
  work: (trx: Transaction<DB>) => Promise<TransactionDecision<T>>,
): Promise<T> {
  const trx = await db.startTransaction().execute();
  let decision: TransactionDecision<T>;
  try {
    decision = await work(trx);
  } catch (error) {
    await trx.rollback().execute();
    throw error;
  }
  if (decision.kind === 'rollback') {
    await trx.rollback().execute();
    return decision.value;
  }
  try {
    await trx.commit().execute();
  } catch (error) {
    // A COMMIT that failed without aborting still holds its connection: roll back to release it.
    if (!trx.isRolledBack) await trx.rollback().execute();
    throw error;
  }
  return decision.value;
}
