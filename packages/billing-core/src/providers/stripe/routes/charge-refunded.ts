import { sql } from 'kysely';
import { InvalidEventError } from '../../../errors';
import { ignored, processed, retryLater } from '../../../inbox/inbox-handler';
import { postLedgerEntry } from '../../../ledger/post-ledger-entry';
import { stripeIdOf, stripeNumberAt } from '../../../provider-data/stripe-objects';
import { references } from '../../../references';
import { defineRoute } from '../../shared/create-provider-handler';
import type { StripeEvent } from '../stripe-event';

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
 * (smaller cumulative amount) event takes nothing. Subscription invoices are recorded and ignored.
 */
export function createChargeRefundedRoute() {
  return defineRoute<StripeEvent, undefined>({
    async apply(trx, event, _prepared, row) {
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
        // Stripe does not order deliveries: the refund of a pack can arrive before the
        // payment_intent.succeeded that records it. Ignoring it would lose the refund for good
        // (found by the chaos suite's out-of-order scenario), so it waits for the payment, and
        // parks as waited_too_long if none ever comes. A charge of an invoice is never recorded
        // under its intent (subscription invoices are keyed by invoice id): ignored as before.
        if (stripeIdOf((charge as Record<string, unknown>).invoice) !== null) {
          return ignored('unknown_payment', `no payment recorded for ${paymentIntentId} (invoice charge)`);
        }
        return retryLater(`payment ${paymentIntentId} of charge ${chargeId} is not recorded yet`);
      }
      if (payment.kind === 'subscription_invoice') {
        return ignored('subscription_refund', `payment ${paymentIntentId} is a subscription invoice`);
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
