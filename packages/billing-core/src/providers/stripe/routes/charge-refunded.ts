import { sql } from 'kysely';
import type { InboxEventRow, PaymentRow } from '../../../db/schema';
import { InvalidEventError } from '../../../errors';
import { lockWalletFunds } from '../../../holds/lock-wallet-funds';
import { type HandlerResult, ignored, processed, retryLater } from '../../../inbox/inbox-handler';
import { scaleInvoiceInstallments } from '../../../installments/scale-invoice-installments';
import { voidInvoiceInstallments } from '../../../installments/void-invoice-installments';
import { lockPayment } from '../../../payments/lock-payment';
import type { ProviderPorts } from '../../../ports/provider-ports';
import { stripeIdOf, stripeNumberAt } from '../../../provider-data/stripe-objects';
import { references } from '../../../references';
import {
  paymentGrantsOf,
  refundTargetOf,
  takeBackPaymentTokens,
  tokensAccountedOf,
} from '../../../refunds/take-back-payment-tokens';
import type { UnitOfWork } from '../../../unit-of-work/unit-of-work';
import { defineRoute } from '../../shared/create-provider-handler';
import type { StripeEvent } from '../stripe-event';

/**
 * Which invoice, if any, the refunded charge paid. A charge in the shape before API 2025-03-31
 * names it (`invoice`: an id, or null for a charge of no invoice). Since then neither the Charge
 * nor its PaymentIntent does, so prepare asks the Stripe API for the intent's InvoicePayment.
 */
type ChargeInvoice =
  | { kind: 'named'; invoiceId: string | null }
  | { kind: 'looked-up'; invoiceId: string | null }
  /** No Stripe API configured: the invoice of a current-shape charge cannot be known. */
  | { kind: 'unknown' }
  /** The lookup failed; thrown by apply only if the answer is needed (the payment is not a pack). */
  | { kind: 'failed'; error: unknown };

/**
 * `charge.refunded` of a one-off pack (token pack or top-up) or of a subscription invoice: takes
 * back `floor(granted × amount_refunded / amount)` tokens less what earlier take-backs of the
 * payment accounted for, one debit per refund step (`stripe:refund:{chargeId}` for the step that
 * completes it, `…:{amountRefunded}` for a partial one), under the payment row's lock so a
 * redelivered or stale event takes nothing; a charge of a payment not recorded yet waits for it
 * (docs/stripe.md, refunds).
 */
export function createChargeRefundedRoute(deps: { ports: ProviderPorts }) {
  return defineRoute<StripeEvent, ChargeInvoice>({
    async prepare(event) {
      const charge = event.data.object;
      if ('invoice' in charge) return { kind: 'named', invoiceId: stripeIdOf(charge.invoice) };
      const paymentIntentId = stripeIdOf(charge.payment_intent);
      if (paymentIntentId === null) return { kind: 'looked-up', invoiceId: null };
      const stripe = deps.ports.stripe;
      if (!stripe) return { kind: 'unknown' };
      try {
        return { kind: 'looked-up', invoiceId: await stripe.findInvoiceOfPaymentIntent(paymentIntentId) };
      } catch (error) {
        return { kind: 'failed', error };
      }
    },
    async apply(uow, event, chargeInvoice, row) {
      const { trx } = uow;
      const charge = event.data.object;
      const chargeId = charge.id;
      if (!chargeId) throw new InvalidEventError('charge without id');
      const paymentIntentId = stripeIdOf(charge.payment_intent);
      if (paymentIntentId === null) return ignored('unknown_payment', `charge ${chargeId} names no payment intent`);
      const packPayment = await lockPayment(trx, paymentIntentId);
      if (packPayment) return refundPayment(uow, { payment: packPayment, charge, chargeId, row });
      if (chargeInvoice.kind === 'failed') throw chargeInvoice.error;
      if (chargeInvoice.kind !== 'unknown' && chargeInvoice.invoiceId !== null) {
        const invoicePayment = await lockPayment(trx, chargeInvoice.invoiceId);
        if (invoicePayment?.kind === 'subscription_invoice') {
          return refundPayment(uow, { payment: invoicePayment, charge, chargeId, row });
        }
        // guard: refund-waits-for-invoice
        return retryLater(`invoice ${chargeInvoice.invoiceId} of charge ${chargeId} is not recorded yet`);
      }
      // Stripe does not order deliveries: the refund of a pack can arrive before the
      // payment_intent.succeeded that records it. Ignoring it would lose the refund for good
      // (found by the chaos suite's out-of-order scenario), so it waits for the payment, and
      // parks as waited_too_long if none ever comes.
      return retryLater(
        `payment ${paymentIntentId} of charge ${chargeId} is not recorded yet${
          chargeInvoice.kind === 'unknown' ? ' (without the Stripe API its invoice, if any, is not known)' : ''
        }`,
      );
    },
  });
}

/**
 * Applies a charge's cumulative refund to the payment it paid (locked): a pack, a top-up or a
 * subscription invoice. What the payment has granted so far (for an annual invoice: its first
 * twelfth and the installments already granted) is taken back in proportion to the money
 * refunded; a full refund of an annual invoice first voids the installments not granted yet, a
 * partial one first scales them to their share of the money not refunded.
 */
async function refundPayment(
  uow: UnitOfWork,
  input: { payment: PaymentRow; charge: StripeEvent['data']['object']; chargeId: string; row: InboxEventRow },
): Promise<HandlerResult> {
  const { trx } = uow;
  const { payment, charge, chargeId, row } = input;
  const paymentId = payment.provider_payment_id;
  if (payment.status === 'refunded') return processed('already_refunded', `payment ${paymentId} already refunded`);
  const amount = stripeNumberAt(charge, 'amount');
  const amountRefunded = stripeNumberAt(charge, 'amount_refunded');
  const full = charge.refunded === true || (amount !== null && amountRefunded !== null && amountRefunded >= amount);
  if (!full) {
    if (amount === null || amountRefunded === null || !Number.isInteger(amount) || !Number.isInteger(amountRefunded))
      throw new InvalidEventError(`charge ${chargeId} is partly refunded without integer amount/amount_refunded`);
    if (amount <= 0 || amountRefunded < 0 || amountRefunded > amount)
      throw new InvalidEventError(`charge ${chargeId}: amount_refunded ${amountRefunded} of amount ${amount}`);
    if (amountRefunded === 0) return ignored('nothing_refunded', `charge ${chargeId} has nothing refunded`);
  }
  // Partial: the money refunded so far, never more than this payment (amounts are the same charge's).
  const refundedMinor = full ? Math.max(payment.amount_minor, amountRefunded ?? 0) : (amountRefunded as number);
  if (!full && refundedMinor <= payment.amount_refunded_minor) {
    return processed(
      'already_refunded',
      `payment ${paymentId} already accounts for ${payment.amount_refunded_minor} refunded (event says ${refundedMinor})`,
    );
  }
  // guard: full-refund-voids-installments
  const voided = full ? await voidInvoiceInstallments(trx, payment, null) : 0;
  // guard: partial-refund-scales-installments
  const scaled = full
    ? 0
    : await scaleInvoiceInstallments(trx, payment, { amount: amount as number, amountRefunded: refundedMinor });
  const grants = await paymentGrantsOf(trx, payment);
  const granted = grants.granted;
  const target = refundTargetOf(grants, { full, amount: amount ?? 0, amountRefunded: refundedMinor });
  const owed = Math.max(0, target - tokensAccountedOf(payment));
  const reference = full ? references.stripeRefund(chargeId) : references.stripePartialRefund(chargeId, refundedMinor);
  // A hold that lapsed unsettled on a voided lot left tokens there that are not the user's: settle
  // lapsed holds first (their voided part taken, the rest settling older shortfalls), so the
  // take-back never takes them as the user's (docs/lots.md "Voids"). Locks the wallet, after the
  // payment, in the order the take-back takes them anyway.
  // guard: refund-settles-lapsed-holds
  await lockWalletFunds(uow, payment.user_id);
  const { taken, shortfall } = await takeBackPaymentTokens(uow, {
    payment,
    owed,
    reference,
    reason: 'stripe_refund',
    inboxEventId: row.id,
    source: { source: 'stripe_refund', sourceId: String(payment.id) },
  });
  await trx
    .updateTable('payments')
    .set({
      status: full ? 'refunded' : 'partially_refunded',
      amount_refunded_minor: refundedMinor,
      refunded_at: sql`now()`,
      updated_at: sql`now()`,
    })
    .where('id', '=', payment.id)
    .execute();
  const detail = `took back ${taken} of ${owed} tokens owed (${payment.tokens_refunded + taken} of ${granted} granted in all) under ${reference}${
    shortfall > 0 ? `; shortfall ${shortfall}` : ''
  }${voided > 0 ? `; ${voided} installments voided` : ''}${scaled > 0 ? `; ${scaled} installments scaled down` : ''}`;
  return full
    ? processed('refunded', detail)
    : processed('partially_refunded', `${refundedMinor} of ${amount} refunded: ${detail}`);
}
