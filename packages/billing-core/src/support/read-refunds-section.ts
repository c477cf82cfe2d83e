import type { Transaction } from 'kysely';
import type { DB } from '../db/schema';
import type { SupportRefund, SupportSubject } from './user-support-view';

/** Token pack refunds (`token_refunds`: RevenueCat cancellations of packs), newest first. */
export async function readRefundsSection(trx: Transaction<DB>, { userIds }: SupportSubject): Promise<SupportRefund[]> {
  const rows = await trx
    .selectFrom('token_refunds')
    .selectAll()
    .where('user_id', 'in', userIds)
    .orderBy('id', 'desc')
    .execute();
  return rows.map((row) => ({
    id: row.id,
    provider: row.provider,
    providerRefundId: row.provider_refund_id,
    packId: row.pack_id,
    creditReference: row.credit_reference,
    tokensCredited: row.tokens_credited,
    tokensTaken: row.tokens_taken,
    shortfall: row.shortfall,
    inboxEventId: row.inbox_event_id,
    createdAt: row.created_at,
  }));
}
