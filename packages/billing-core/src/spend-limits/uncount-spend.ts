import { sql, type Transaction } from 'kysely';
import type { DB, LedgerEntryRow } from '../db/schema';

/**
 * Takes a spend given back off what its user spent (docs/spend-limits.md): a failed studio
 * generation's refund stops counting against the limits. The spend was counted on the UTC day of
 * its entry's created_at (the posting statement's counter), so that day's counter goes down by
 * it, never below zero (a spend made before counting began was never counted). Under the wallet
 * lock the give-back's posting took, in its transaction.
 */
export async function uncountSpend(
  trx: Transaction<DB>,
  spend: Pick<LedgerEntryRow, 'user_id' | 'amount' | 'created_at'>,
) {
  await sql`
    UPDATE spend_days SET spent = greatest(spent - ${-spend.amount}, 0)
     WHERE user_id = ${spend.user_id} AND day = (${spend.created_at}::timestamptz AT TIME ZONE 'UTC')::date`.execute(
    trx,
  );
}
