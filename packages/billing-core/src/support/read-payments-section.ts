import type { Transaction } from 'kysely';
import type { DB } from '../db/schema';
import type { SupportPayment, SupportSubject } from './user-support-view';

/** Stripe payments (packs, top-ups, invoices) newest first, with refund columns and the confirmation email of each. */
export async function readPaymentsSection(
  trx: Transaction<DB>,
  { userIds }: SupportSubject,
): Promise<SupportPayment[]> {
  const rows = await trx
    .selectFrom('payments')
    .leftJoin('email_outbox', 'email_outbox.payment_id', 'payments.id')
    .selectAll('payments')
    .select([
      'email_outbox.id as email_id',
      'email_outbox.status as email_status',
      'email_outbox.to_address as email_to_address',
      'email_outbox.attempts as email_attempts',
      'email_outbox.last_error as email_last_error',
      'email_outbox.sent_at as email_sent_at',
    ])
    .where('payments.user_id', 'in', userIds)
    .orderBy('payments.id', 'desc')
    .execute();
  return rows.map((row) => ({
    id: row.id,
    provider: row.provider,
    providerPaymentId: row.provider_payment_id,
    kind: row.kind,
    productId: row.product_id,
    amountMinor: row.amount_minor,
    currency: row.currency,
    status: row.status,
    ledgerReference: row.ledger_reference,
    tokensGranted: row.tokens_granted,
    amountRefundedMinor: row.amount_refunded_minor,
    tokensRefunded: row.tokens_refunded,
    refundShortfall: row.refund_shortfall,
    refundedAt: row.refunded_at,
    inboxEventId: row.inbox_event_id,
    createdAt: row.created_at,
    email:
      row.email_id === null
        ? null
        : {
            status: row.email_status ?? 'pending',
            toAddress: row.email_to_address,
            attempts: row.email_attempts ?? 0,
            lastError: row.email_last_error,
            sentAt: row.email_sent_at,
          },
  }));
}
