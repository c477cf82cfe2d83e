import { sql, type Transaction } from 'kysely';
import type { DB } from '../db/schema';
import type { SupportRefund, SupportSubject } from './user-support-view';

/**
 * Token pack refunds, newest first: `token_refunds` (RevenueCat cancellations of packs, Google
 * Play voids) and `apple_refunds` (App Store refunds, each with the pack payment it took back;
 * `providerRefundId` is the transaction). `id` is the row's id in its own table.
 */
export async function readRefundsSection(trx: Transaction<DB>, { userIds }: SupportSubject): Promise<SupportRefund[]> {
  const { rows } = await sql<SupportRefund>`
    SELECT id, provider, provider_refund_id AS "providerRefundId", pack_id AS "packId",
           credit_reference AS "creditReference", tokens_credited AS "tokensCredited",
           tokens_taken AS "tokensTaken", shortfall, inbox_event_id AS "inboxEventId", created_at AS "createdAt"
      FROM token_refunds
     WHERE user_id IN (${sql.join(userIds)})
    UNION ALL
    SELECT r.id, p.provider, r.transaction_id, p.product_id, p.ledger_reference, p.tokens_granted,
           r.tokens_taken, r.shortfall, r.refund_inbox_event_id, r.created_at
      FROM apple_refunds r
      JOIN payments p ON p.id = r.payment_id
     WHERE r.user_id IN (${sql.join(userIds)})
     ORDER BY "createdAt" DESC, id DESC`.execute(trx);
  return rows;
}
