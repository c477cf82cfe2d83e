import { sql, type Transaction } from 'kysely';
import type { DB, PaymentRow } from '../db/schema';

/**
 * Voids the installments of a subscription invoice that are not granted yet (scheduled, or
 * claimed by the loop and not granted), whatever their due date: the invoice's money went back
 * (a full refund) or was withdrawn (a chargeback, named by `disputeId` so its reinstatement can
 * schedule them again). A conditional update: a grant committing at the same moment holds the
 * row, and once it commits the row is granted and stays so (the take-back then counts it).
 * No-op for other payments. Idempotent; joins the caller's transaction.
 */
export async function voidInvoiceInstallments(
  trx: Transaction<DB>,
  payment: Pick<PaymentRow, 'kind' | 'provider_payment_id'>,
  disputeId: string | null,
): Promise<number> {
  if (payment.kind !== 'subscription_invoice') return 0;
  const voided = await trx
    .updateTable('stripe_installments')
    .set({ status: 'void', voided_by_dispute_id: disputeId, updated_at: sql`now()` })
    .where('invoice_id', '=', payment.provider_payment_id)
    .where('status', 'in', ['scheduled', 'processing'])
    .executeTakeFirst();
  return Number(voided.numUpdatedRows);
}
