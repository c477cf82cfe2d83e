import { sql } from 'kysely';
import { InvalidEventError } from '../../../errors';
import { ignored, processed, retryLater } from '../../../inbox/inbox-handler';
import { postLedgerEntry } from '../../../ledger/post-ledger-entry';
import { references } from '../../../references';
import { defineRoute } from '../../shared/create-provider-handler';
import type { StripeEvent } from '../stripe-event';
import { stripeIdOf } from '../stripe-objects';

/**
 * `charge.refunded` of a one-off pack (token pack or top-up) that Stripe reports fully refunded:
 * takes the pack's tokens back once, under `stripe:refund:{chargeId}`, never below zero. What was
 * already spent is recorded on the payment as `refund_shortfall` for support. The payment row is
 * locked and marked refunded in the same transaction, so a redelivery takes nothing more.
 * Partial refunds (`refunded: false`) and subscription invoices are recorded and ignored.
 */
export function createChargeRefundedRoute() {
  return defineRoute<StripeEvent, undefined>({
    async apply(trx, event, _prepared, row) {
      const charge = event.data.object;
      const chargeId = charge.id;
      if (!chargeId) throw new InvalidEventError('charge without id');
      if (charge.refunded !== true) return ignored('partial_refund', `charge ${chargeId} is only partly refunded`);
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
      const wallet = await trx
        .selectFrom('wallets')
        .select('balance')
        .where('user_id', '=', payment.user_id)
        .forUpdate()
        .executeTakeFirstOrThrow();
      const takeBack = Math.min(payment.tokens_granted, wallet.balance);
      const shortfall = payment.tokens_granted - takeBack;
      if (takeBack > 0) {
        await postLedgerEntry(trx, {
          userId: payment.user_id,
          reference: references.stripeRefund(chargeId),
          amount: -takeBack,
          reason: 'stripe_refund',
          inboxEventId: row.id,
        });
      }
      await trx
        .updateTable('payments')
        .set({
          status: 'refunded',
          tokens_refunded: takeBack,
          refund_shortfall: shortfall,
          refunded_at: sql`now()`,
          updated_at: sql`now()`,
        })
        .where('id', '=', payment.id)
        .execute();
      return processed(
        'refunded',
        `took back ${takeBack} of ${payment.tokens_granted} tokens${shortfall > 0 ? `; shortfall ${shortfall}` : ''}`,
      );
    },
  });
}
