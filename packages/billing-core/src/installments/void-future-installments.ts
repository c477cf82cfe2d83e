import { sql, type Transaction } from 'kysely';
import type { DB } from '../db/schema';

/**
 * Voids a subscription's installments that are still scheduled and not yet due (database
 * clock). Due ones stay owed and the loop grants them. Idempotent; joins the caller's transaction.
 */
export async function voidFutureInstallments(trx: Transaction<DB>, subscriptionId: string): Promise<number> {
  const voided = await trx
    .updateTable('stripe_installments')
    .set({ status: 'void', updated_at: sql`now()` })
    .where('subscription_id', '=', subscriptionId)
    .where('status', '=', 'scheduled')
    .where('due_at', '>', sql<Date>`now()`)
    .executeTakeFirst();
  return Number(voided.numUpdatedRows);
}
