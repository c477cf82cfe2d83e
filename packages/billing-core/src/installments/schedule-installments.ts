import { sql, type Transaction } from 'kysely';
import type { DB } from '../db/schema';

export const ANNUAL_INSTALLMENTS_AFTER_FIRST = 11;

/**
 * Schedules the eleven monthly installments of an annual invoice (the first twelfth is granted
 * with the invoice itself). Due dates come from the database clock: month n is due n months
 * after now; with `creditsExpire: period_end` its lot expires when month n + 1 is due. Idempotent by (invoice, sequence); joins the caller's transaction.
 */
export async function scheduleInstallments(
  trx: Transaction<DB>,
  input: {
    subscriptionId: string;
    invoiceId: string;
    userId: string;
    tokensPerInstallment: number;
    /** The price's creditsExpire: `period_end` makes each grant expire when the next is due. */
    creditsExpire: 'never' | 'period_end';
    /** The price's rolloverMax, handed to each installment's lot. */
    rolloverMax?: number;
  },
): Promise<number> {
  const rows = Array.from({ length: ANNUAL_INSTALLMENTS_AFTER_FIRST }, (_, index) => ({
    subscription_id: input.subscriptionId,
    invoice_id: input.invoiceId,
    user_id: input.userId,
    sequence: index + 1,
    tokens: input.tokensPerInstallment,
    full_tokens: input.tokensPerInstallment,
    due_at: sql<Date>`now() + make_interval(months => ${index + 1})`,
    // Month n's grant expires when month n + 1 is due; the last one a month after its own.
    lot_expires_at:
      // guard: installment-lot-period-end
      input.creditsExpire === 'period_end' ? sql<Date>`now() + make_interval(months => ${index + 2})` : null,
    // guard: installment-lot-rollover
    lot_rollover_max: input.rolloverMax ?? 0,
  }));
  const inserted = await trx
    .insertInto('stripe_installments')
    .values(rows)
    .onConflict((oc) => oc.columns(['invoice_id', 'sequence']).doNothing())
    .executeTakeFirst();
  return Number(inserted.numInsertedOrUpdatedRows ?? 0);
}
