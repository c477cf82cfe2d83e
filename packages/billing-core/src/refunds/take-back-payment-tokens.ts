import { sql, type Transaction } from 'kysely';
import type { DB, PaymentRow, TakeBackSource } from '../db/schema';
import { readWalletFunds } from '../ledger/held-tokens';
import { postLedgerEntry } from '../ledger/post-ledger-entry';
import type { UnitOfWork } from '../unit-of-work/unit-of-work';
import { recordTakeBackShortfall } from './take-back-shortfalls';

/** What a Stripe payment has granted so far (see paymentGrantsOf). */
export interface PaymentGrants {
  /** The tokens granted: its own credit plus, for an annual invoice, the installments granted. */
  granted: number;
  /** The same with each granted installment at its original full share (`full_tokens`). */
  grantedAtFullShare: number;
}

/**
 * The tokens a Stripe payment has granted so far: its own credit (a pack, a top-up, an invoice's
 * period credits or first twelfth) plus, for an annual invoice, the installments already granted
 * (at the share they were granted, and at their full share). Call it after voiding or scaling
 * the installments a take-back voids or scales, so an installment being granted right now is
 * either counted here (its grant committed first) or voided/scaled (see grantDueInstallments).
 */
export async function paymentGrantsOf(trx: Transaction<DB>, payment: PaymentRow): Promise<PaymentGrants> {
  if (payment.kind !== 'subscription_invoice') {
    return { granted: payment.tokens_granted, grantedAtFullShare: payment.tokens_granted };
  }
  const installments = await trx
    .selectFrom('stripe_installments')
    .select([
      sql<string>`coalesce(sum(tokens), 0)`.as('tokens'),
      sql<string>`coalesce(sum(full_tokens), 0)`.as('full_tokens'),
    ])
    .where('invoice_id', '=', payment.provider_payment_id)
    .where('status', '=', 'granted')
    .executeTakeFirstOrThrow();
  return {
    granted: payment.tokens_granted + Number(installments.tokens),
    grantedAtFullShare: payment.tokens_granted + Number(installments.full_tokens),
  };
}

/** The tokens a Stripe payment has granted so far (paymentGrantsOf's `granted`). */
export async function tokensGrantedByPayment(trx: Transaction<DB>, payment: PaymentRow): Promise<number> {
  return (await paymentGrantsOf(trx, payment)).granted;
}

/**
 * What a payment's refunds take back in all once `amountRefunded` of its `amount` is refunded:
 * everything granted when fully refunded, else `floor(grantedAtFullShare × amountRefunded /
 * amount)` less what installments granted at a share an earlier partial refund scaled down have
 * already kept back (`grantedAtFullShare − granted`). With no scaled installment this is
 * `floor(granted × amountRefunded / amount)`. Never below 0 nor above `granted`.
 */
export function refundTargetOf(
  grants: PaymentGrants,
  refund: { full: boolean; amount: number; amountRefunded: number },
): number {
  if (refund.full) return grants.granted;
  if (refund.amount <= 0 || refund.amountRefunded <= 0) return 0;
  const refunded = Math.min(refund.amountRefunded, refund.amount);
  const share = Number((BigInt(grants.grantedAtFullShare) * BigInt(refunded)) / BigInt(refund.amount));
  const keptBack = grants.grantedAtFullShare - grants.granted;
  // guard: refund-target-kept-back
  return Math.min(grants.granted, Math.max(0, share - keptBack));
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
 * chargebacks): takes `min(owed, available)` (the balance less what active holds reserve) under the reference and records the rest as the
 * payment's shortfall (already spent, shown to support; also in take_back_shortfalls, which a
 * failed generation in flight at this moment settles, see recoverShortfallsFromStudioRefund, as
 * does what an active hold frees when it ends, see recoverShortfallsFromHold).
 * The payment's `tokens_refunded` and
 * `refund_shortfall` count every take-back, so the next one owes only what is left.
 *
 * Runs inside the caller's transaction, which holds the payment row's lock and fences
 * idempotency (a refunded amount, a dispute row); the ledger reference is a second fence.
 */
export async function takeBackPaymentTokens(
  uow: UnitOfWork,
  takeBack: PaymentTakeBack,
): Promise<{ taken: number; shortfall: number }> {
  const { trx } = uow;
  const { payment } = takeBack;
  const owed = Math.max(0, takeBack.owed);
  // What active holds reserve is never taken (docs/holds.md): it waits for the hold's end, when
  // what the hold frees settles this shortfall first (the hold's marker is before this one's).
  const funds = await readWalletFunds(trx, payment.user_id, { lock: true });
  // guard: take-back-available
  const taken = Math.min(owed, Math.max(0, funds.available));
  const shortfall = owed - taken;
  if (taken > 0) {
    await postLedgerEntry(uow, {
      userId: payment.user_id,
      reference: takeBack.reference,
      amount: -taken,
      reason: takeBack.reason,
      lots: { kind: 'take-back', fromLotOf: payment.ledger_reference },
      inboxEventId: takeBack.inboxEventId,
    });
  }
  await recordTakeBackShortfall(uow, {
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
