import type { Transaction } from 'kysely';
import type { DB } from '../db/schema';
import type { SupportSubject, SupportTopup } from './user-support-view';

/** Top-ups started through the API under any of the user's ids, newest first. */
export async function readTopupsSection(trx: Transaction<DB>, { userIds }: SupportSubject): Promise<SupportTopup[]> {
  const rows = await trx
    .selectFrom('topups')
    .selectAll()
    .where('user_id', 'in', userIds)
    .orderBy('created_at', 'desc')
    .execute();
  return rows.map((row) => ({
    reference: row.reference,
    packId: row.pack_id,
    tokens: row.tokens,
    amountMinor: row.amount_minor,
    currency: row.currency,
    paymentIntentId: row.payment_intent_id,
    status: row.status,
    paidAt: row.paid_at,
    createdAt: row.created_at,
  }));
}
