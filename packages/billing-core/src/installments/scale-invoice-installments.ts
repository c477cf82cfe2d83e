import { sql, type Transaction } from 'kysely';
import type { DB, PaymentRow } from '../db/schema';

/**
 * Scales the installments of a partly refunded annual invoice that are not granted yet (scheduled,
 * claimed by the loop, parked, or voided by a dispute that may be reinstated) to their share of the
 * money not refunded, floored: `floor(full_tokens × (amount − amountRefunded) / amount)` (the charge's amounts). Always
 * from the original full share, so successive partial refunds never compound their rounding.
 *
 * A conditional update, like voidInvoiceInstallments: a grant committing at the same moment holds
 * its row (processing → granted), and once it commits the row is granted and not scaled (the
 * refund then counts it among what the payment granted); a row scaled first is granted at its
 * scaled share (grantInstallment posts the tokens its own update returns). Call it before
 * reading what the payment granted. No-op for other payments. Joins the caller's transaction.
 */
export async function scaleInvoiceInstallments(
  trx: Transaction<DB>,
  payment: Pick<PaymentRow, 'kind' | 'provider_payment_id'>,
  money: { amount: number; amountRefunded: number },
): Promise<number> {
  if (payment.kind !== 'subscription_invoice' || money.amount <= 0) return 0;
  const remaining = Math.max(0, money.amount - money.amountRefunded);
  // guard: installment-scale-scheduled-only
  const scaled = await trx
    .updateTable('stripe_installments')
    .set({
      // guard: installment-scale-from-full
      tokens: sql<number>`(full_tokens * ${remaining}::bigint) / ${money.amount}::bigint`,
      updated_at: sql`now()`,
    })
    .where('invoice_id', '=', payment.provider_payment_id)
    .where('status', '<>', 'granted')
    .executeTakeFirst();
  return Number(scaled.numUpdatedRows);
}
