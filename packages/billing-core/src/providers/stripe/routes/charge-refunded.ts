import { sql, type Transaction } from 'kysely';
import type { DB } from '../../../db/schema';
import { InvalidEventError } from '../../../errors';
import { type HandlerResult, ignored, processed, retryLater } from '../../../inbox/inbox-handler';
import { postLedgerEntry } from '../../../ledger/post-ledger-entry';
import type { ProviderPorts } from '../../../ports/provider-ports';
import { stripeIdOf, stripeNumberAt } from '../../../provider-data/stripe-objects';
import { references } from '../../../references';
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
 * `charge.refunded` of a one-off pack (token pack or top-up), fully or partly refunded.
 *
 * Stripe's charge carries the cumulative `amount_refunded` (since API 2022-11-15 it no longer
 * carries the refunds themselves), so each event states how much of the charge is refunded so
 * far. The tokens the refunds reverse are proportional: `floor(tokens_granted × amount_refunded /
 * amount)`, all of them once the charge is fully refunded. What an event owes is that target minus
 * what earlier refunds of the payment already accounted for (taken back + shortfall); it takes
 * back what the wallet holds, never below zero, and records the rest as `refund_shortfall`.
 *
 * One ledger debit per refund step: `stripe:refund:{chargeId}` for the step that completes the
 * refund (unchanged for a charge refunded in one go), `stripe:refund:{chargeId}:{amountRefunded}`
 * for a partial step (each refund moves the cumulative amount, so this names the refund). The
 * payment row is locked and carries `amount_refunded_minor`, so a redelivered, replayed or stale
 * (smaller cumulative amount) event takes nothing.
 *
 * A charge of an invoice takes no tokens back: only one-off packs are refunded in tokens (a
 * subscription's credits follow its plan). Its payment is recorded under the invoice id, not the
 * intent, so the invoice is found from the charge (older API shape) or through the intent's
 * InvoicePayment (current shape; see ChargeInvoice), and the event is `ignored` at once as
 * `subscription_refund` (or `unknown_payment` for an invoice Tally has not recorded) instead of
 * waiting for a pack payment that never comes.
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
    async apply(trx, event, chargeInvoice, row) {
      const charge = event.data.object;
      const chargeId = charge.id;
      if (!chargeId) throw new InvalidEventError('charge without id');
      const paymentIntentId = stripeIdOf(charge.payment_intent);
      if (paymentIntentId === null) return ignored('unknown_payment', `charge ${chargeId} names no payment intent`);
      const payment = await trx
        .selectFrom('payments')
        .selectAll()
        .where('provider', '=', 'stripe')
        .where('provider_payment_id', '=', paymentIntentId)
        .forUpdate()
        .executeTakeFirst();
      if (!payment) {
        if (chargeInvoice.kind === 'failed') throw chargeInvoice.error;
        if (chargeInvoice.kind !== 'unknown' && chargeInvoice.invoiceId !== null) {
          return refundOfInvoice(trx, chargeId, chargeInvoice.invoiceId);
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
      }
      if (payment.status === 'refunded')
        return processed('already_refunded', `payment ${paymentIntentId} already refunded`);
      const amount = stripeNumberAt(charge, 'amount');
      const amountRefunded = stripeNumberAt(charge, 'amount_refunded');
      const full = charge.refunded === true || (amount !== null && amountRefunded !== null && amountRefunded >= amount);
      if (!full) {
        if (
          amount === null ||
          amountRefunded === null ||
          !Number.isInteger(amount) ||
          !Number.isInteger(amountRefunded)
        )
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
          `payment ${paymentIntentId} already accounts for ${payment.amount_refunded_minor} refunded (event says ${refundedMinor})`,
        );
      }
      const target = full
        ? payment.tokens_granted
        : Number((BigInt(payment.tokens_granted) * BigInt(refundedMinor)) / BigInt(amount as number));
      const accounted = payment.tokens_refunded + payment.refund_shortfall;
      const owed = Math.max(0, target - accounted);
      const wallet = await trx
        .selectFrom('wallets')
        .select('balance')
        .where('user_id', '=', payment.user_id)
        .forUpdate()
        .executeTakeFirstOrThrow();
      const takeBack = Math.min(owed, wallet.balance);
      const shortfall = owed - takeBack;
      const reference = full
        ? references.stripeRefund(chargeId)
        : references.stripePartialRefund(chargeId, refundedMinor);
      if (takeBack > 0) {
        await postLedgerEntry(trx, {
          userId: payment.user_id,
          reference,
          amount: -takeBack,
          reason: 'stripe_refund',
          inboxEventId: row.id,
        });
      }
      await trx
        .updateTable('payments')
        .set({
          status: full ? 'refunded' : 'partially_refunded',
          amount_refunded_minor: refundedMinor,
          tokens_refunded: payment.tokens_refunded + takeBack,
          refund_shortfall: payment.refund_shortfall + shortfall,
          refunded_at: sql`now()`,
          updated_at: sql`now()`,
        })
        .where('id', '=', payment.id)
        .execute();
      const detail = `took back ${takeBack} of ${owed} tokens owed (${payment.tokens_refunded + takeBack} of ${
        payment.tokens_granted
      } in all) under ${reference}${shortfall > 0 ? `; shortfall ${shortfall}` : ''}`;
      return full
        ? processed('refunded', detail)
        : processed('partially_refunded', `${refundedMinor} of ${amount} refunded: ${detail}`);
    },
  });
}

/** The refund of an invoice's charge: no tokens move (see createChargeRefundedRoute). */
async function refundOfInvoice(trx: Transaction<DB>, chargeId: string, invoiceId: string): Promise<HandlerResult> {
  const payment = await trx
    .selectFrom('payments')
    .select(['kind', 'user_id'])
    .where('provider', '=', 'stripe')
    .where('provider_payment_id', '=', invoiceId)
    .executeTakeFirst();
  if (payment?.kind === 'subscription_invoice') {
    return ignored(
      'subscription_refund',
      `charge ${chargeId} pays subscription invoice ${invoiceId} of ${payment.user_id}; subscription credits are not taken back`,
    );
  }
  return ignored('unknown_payment', `charge ${chargeId} pays invoice ${invoiceId}, which is not a recorded payment`);
}
