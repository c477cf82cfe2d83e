import { references } from '../references';
import type { SupportSectionReader } from './find-user-support-view';

/**
 * Stripe's sections: payments newest first (refund columns and the confirmation email of each),
 * top-ups newest first, and annual-plan installments by due date.
 */
export const readStripeSections: SupportSectionReader = async (trx, { userIds }) => {
  const payments = await trx
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
  const topups = await trx
    .selectFrom('topups')
    .selectAll()
    .where('user_id', 'in', userIds)
    .orderBy('created_at', 'desc')
    .execute();
  const installments = await trx
    .selectFrom('stripe_installments')
    .selectAll()
    .where('user_id', 'in', userIds)
    .orderBy('due_at')
    .orderBy('id')
    .execute();
  return {
    payments: payments.map((row) => ({
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
    })),
    topups: topups.map((row) => ({
      reference: row.reference,
      packId: row.pack_id,
      tokens: row.tokens,
      amountMinor: row.amount_minor,
      currency: row.currency,
      paymentIntentId: row.payment_intent_id,
      status: row.status,
      paidAt: row.paid_at,
      createdAt: row.created_at,
    })),
    installments: installments.map((row) => ({
      id: row.id,
      subscriptionId: row.subscription_id,
      invoiceId: row.invoice_id,
      sequence: row.sequence,
      tokens: row.tokens,
      dueAt: row.due_at,
      status: row.status,
      attempts: row.attempts,
      lastError: row.last_error,
      grantedAt: row.granted_at,
      ledgerReference: references.stripeInstallment(row.id),
    })),
  };
};

/** Token pack refunds (`token_refunds`: RevenueCat cancellations of packs), newest first. */
export const readRefundsSection: SupportSectionReader = async (trx, { userIds }) => {
  const rows = await trx
    .selectFrom('token_refunds')
    .selectAll()
    .where('user_id', 'in', userIds)
    .orderBy('id', 'desc')
    .execute();
  return {
    refunds: rows.map((row) => ({
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
    })),
  };
};
