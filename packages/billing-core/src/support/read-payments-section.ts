import type { Transaction } from 'kysely';
import type { DB } from '../db/schema';
import { toCamelCased } from '../db/to-camel-cased';
import type { SupportPayment, SupportSubject } from './user-support-view';

/** Stripe payments (packs, top-ups, invoices) newest first, with refund columns and the confirmation email of each. */
export async function readPaymentsSection(
  trx: Transaction<DB>,
  { userIds }: SupportSubject,
): Promise<SupportPayment[]> {
  const payments = await trx
    .selectFrom('payments')
    .leftJoin('email_outbox', 'email_outbox.payment_id', 'payments.id')
    .select([
      'payments.id',
      'payments.provider',
      'payments.provider_payment_id',
      'payments.kind',
      'payments.product_id',
      'payments.amount_minor',
      'payments.currency',
      'payments.status',
      'payments.ledger_reference',
      'payments.tokens_granted',
      'payments.amount_refunded_minor',
      'payments.tokens_refunded',
      'payments.refund_shortfall',
      'payments.refunded_at',
      'payments.inbox_event_id',
      'payments.created_at',
    ])
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
  return payments.map(
    ({ email_id, email_status, email_to_address, email_attempts, email_last_error, email_sent_at, ...payment }) => ({
      ...toCamelCased(payment),
      email:
        email_id === null
          ? null
          : {
              status: email_status ?? 'pending',
              toAddress: email_to_address,
              attempts: email_attempts ?? 0,
              lastError: email_last_error,
              sentAt: email_sent_at,
            },
    }),
  );
}
