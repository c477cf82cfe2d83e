import { sql, type Transaction } from 'kysely';
import type { DB, PaymentRow, TakeBackSource } from '../db/schema';
import { postLedgerEntry } from '../ledger/post-ledger-entry';
import { recordTakeBackShortfall } from './take-back-shortfalls';

/**
 * The tokens a Stripe payment has granted so far: its own credit (a pack, a top-up, an invoice's
 * period credits or first twelfth) plus, for an annual invoice, the installments already granted.
 * Call it after voiding the installments a take-back voids, so an installment being granted right
 * now is either counted here (its grant committed first) or voided (see grantDueInstallments).
 */
export async function tokensGrantedByPayment(trx: Transaction<DB>, payment: PaymentRow): Promise<number> {
  if (payment.kind !== 'subscription_invoice') return payment.tokens_granted;
  const installments = await trx
    .selectFrom('stripe_installments')
    .select(sql<string>`coalesce(sum(tokens), 0)`.as('tokens'))
    .where('invoice_id', '=', payment.provider_payment_id)
    .where('status', '=', 'granted')
    .executeTakeFirstOrThrow();
  return payment.tokens_granted + Number(installments.tokens);
}

/** What a payment's take-backs (refunds, chargebacks) have accounted for: taken back + shortfall. */
export function tokensAccountedOf(payment: Pick<PaymentRow, 'tokens_refunded' | 'refund_shortfall'>): number {
  return payment.tokens_refunded + payment.refund_shortfall;
}

export interface PaymentTakeBack {
  /** The payment, locked by the caller (FOR UPDATE) in this transaction. */
  payment: PaymentRow;
  /** Tokens this step owes back; at most what the wallet holds is taken, never below zero. */
  owed: number;
  /** The debit's ledger reference, from `references`. */
  reference: string;
  reason: string;
  inboxEventId: number | null;
  /** What the shortfall, if any, is recorded against (take_back_shortfalls). */
  source: { source: TakeBackSource; sourceId: string };
}

/**
 * The one way Stripe money is taken back from a wallet (refunds of packs and invoices,
 * chargebacks): takes `min(owed, balance)` under the reference and records the rest as the
 * payment's shortfall (already spent, shown to support; also in take_back_shortfalls, which a
 * failed generation in flight at this moment settles, see recoverShortfallsFromStudioRefund).
 * The payment's `tokens_refunded` and
 * `refund_shortfall` count every take-back, so the next one owes only what is left.
 *
 * Runs inside the caller's transaction, which holds the payment row's lock and fences
 * idempotency (a refunded amount, a dispute row); the ledger reference is a second fence.
 */
export async function takeBackPaymentTokens(
  trx: Transaction<DB>,
  takeBack: PaymentTakeBack,
): Promise<{ taken: number; shortfall: number }> {
  const { payment } = takeBack;
  const owed = Math.max(0, takeBack.owed);
  const wallet = await trx
    .selectFrom('wallets')
    .select('balance')
    .where('user_id', '=', payment.user_id)
    .forUpdate()
    .executeTakeFirst();
  const taken = Math.min(owed, wallet?.balance ?? 0);
  const shortfall = owed - taken;
  if (taken > 0) {
    await postLedgerEntry(trx, {
      userId: payment.user_id,
      reference: takeBack.reference,
      amount: -taken,
      reason: takeBack.reason,
      inboxEventId: takeBack.inboxEventId,
    });
  }
  await recordTakeBackShortfall(trx, {
    userId: payment.user_id,
    ...takeBack.source,
    takeBackReference: takeBack.reference,
    tokens: shortfall,
  });
  if (owed > 0) {
    await trx
      .updateTable('payments')
      .set({
        tokens_refunded: sql`tokens_refunded + ${taken}`,
        refund_shortfall: sql`refund_shortfall + ${shortfall}`,
        updated_at: sql`now()`,
      })
      .where('id', '=', payment.id)
      .execute();
  }
  return { taken, shortfall };
}
