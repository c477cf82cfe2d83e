import type { Transaction } from 'kysely';
import type { DB, PaymentRow } from '../db/schema';

/**
 * The Stripe payment recorded under this id (a PaymentIntent for packs and top-ups, an invoice
 * id for subscription invoices), locked until the caller's transaction ends: every take-back of
 * one payment (refunds, chargebacks) runs one at a time and sees what the previous one accounted.
 */
export function lockPayment(trx: Transaction<DB>, providerPaymentId: string): Promise<PaymentRow | undefined> {
  return trx
    .selectFrom('payments')
    .selectAll()
    .where('provider', '=', 'stripe')
    .where('provider_payment_id', '=', providerPaymentId)
    .forUpdate()
    .executeTakeFirst();
}
