import type { Transaction } from 'kysely';
import type { DB } from '../../db/schema';

/**
 * Claims a store transaction for the token pack credit of one inbox event, inside the crediting
 * transaction (revenuecat_pack_transactions, primary key on the store transaction): the first
 * event to commit wins. Returns the row that holds the transaction: this event's, or the one that
 * credited it first (a concurrent claimer waits on the key until the first commits, then finds
 * its row). Idempotent for the same event: a replay finds its own row.
 */
export async function claimPackTransaction(
  trx: Transaction<DB>,
  claim: {
    transactionId: string;
    userId: string;
    productId: string;
    reference: string;
    inboxEventId: number;
    verified: boolean;
  },
) {
  const inserted = await trx
    .insertInto('revenuecat_pack_transactions')
    .values({
      store_transaction_id: claim.transactionId,
      user_id: claim.userId,
      product_id: claim.productId,
      ledger_reference: claim.reference,
      inbox_event_id: claim.inboxEventId,
      verified: claim.verified,
    })
    .onConflict((oc) => oc.column('store_transaction_id').doNothing())
    .returningAll()
    .executeTakeFirst();
  if (inserted) return inserted;
  return trx
    .selectFrom('revenuecat_pack_transactions')
    .selectAll()
    .where('store_transaction_id', '=', claim.transactionId)
    .executeTakeFirstOrThrow();
}

/** A store transaction as RevenueCat bodies carry it (a string, or digits sent as a number); null otherwise. */
export function toStoreTransactionId(value: unknown): string | null {
  if (typeof value === 'string' && value.length > 0 && value.length <= 255) return value;
  if (typeof value === 'number' && Number.isSafeInteger(value)) return String(value);
  return null;
}
