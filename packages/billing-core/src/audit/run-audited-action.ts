import { commitWith, runInTransaction } from '@tally/platform/db';
import type { Kysely, Transaction } from 'kysely';
import type { DB } from '../db/schema';
import { type AdminActionRecord, recordAdminAction } from './record-admin-action';

/**
 * Runs an operator action that is one database transaction (requeue, replay, redeliver) together
 * with its audit row: `act` does the action's writes and decides its answer (a refusal such as
 * `not_parked` is an answer too), `describe` turns that answer into the row, and both commit in
 * one transaction. So an action never lands without its row, and a row never claims an action
 * that rolled back. Whatever follows the commit (the queue hand-off) is the caller's, outside.
 */
export async function runAuditedAction<T>(
  db: Kysely<DB>,
  act: (trx: Transaction<DB>) => Promise<T>,
  describe: (result: T) => AdminActionRecord,
): Promise<{ result: T; auditId: number }> {
  return runInTransaction(db, async (trx) => {
    const result = await act(trx);
    // guard: audit-row-in-transaction
    const auditId = await recordAdminAction(trx, describe(result));
    return commitWith({ result, auditId });
  });
}
