import { sql } from 'kysely';
import type { InboxEventRow, PaymentRow } from '../../../db/schema';
import { InvalidEventError, NotConfiguredError } from '../../../errors';
import { lockWalletFunds } from '../../../holds/lock-wallet-funds';
import { ignored, processed, retryLater } from '../../../inbox/inbox-handler';
import { voidInvoiceInstallments } from '../../../installments/void-invoice-installments';
import { postGiveBack } from '../../../ledger/give-back-tokens';
import { lockPayment } from '../../../payments/lock-payment';
import type { ProviderPorts } from '../../../ports/provider-ports';
import { disputeFundsOf, type StripeJson, stripeIdOf, stripeStringAt } from '../../../provider-data/stripe-objects';
import { references } from '../../../references';
import {
  paymentGrantsOf,
  refundTargetOf,
  takeBackPaymentTokens,
  tokensAccountedOf,
  tokensGrantedByPayment,
} from '../../../refunds/take-back-payment-tokens';
import { releaseTakeBackShortfall } from '../../../refunds/take-back-shortfalls';
import { isEndedStripeStatus } from '../../../subscriptions/save-stripe-subscription';
import type { UnitOfWork } from '../../../unit-of-work/unit-of-work';
import { defineRoute } from '../../shared/create-provider-handler';
import type { StripeEvent } from '../stripe-event';

/** The event types whose funds moves Tally applies. */
export const stripeDisputeFundsEventTypes = [
  'charge.dispute.funds_withdrawn',
  'charge.dispute.funds_reinstated',
] as const;
/** Dispute events that move no money (the funds events do). */
export const stripeDisputeStatusEventTypes = [
  'charge.dispute.created',
  'charge.dispute.updated',
  'charge.dispute.closed',
] as const;

interface DisputeRead {
  dispute: StripeJson;
  /** The invoice the disputed intent paid (InvoicePayment), or null; only needed when no pack payment matches. */
  invoice: { kind: 'found'; invoiceId: string | null } | { kind: 'failed'; error: unknown };
}

/**
 * `charge.dispute.funds_withdrawn` / `funds_reinstated`: a chargeback takes back what the
 * disputed payment granted (a pack, a top-up, or a subscription invoice with the installments
 * already granted; its scheduled ones are voided), under `stripe:dispute:{id}`, never below zero
 * (the rest is the shortfall, on the stripe_disputes row and the payment); a reinstatement gives
 * back what was taken less what the payment's refunds now take back (see reinstate), under
 * `stripe:dispute:{id}:reinstated`, and schedules again the installments the dispute voided
 * (unless the invoice is refunded in full or the subscription has ended).
 *
 * Order does not matter: prepare re-reads the dispute (`GET /v1/disputes/{id}`, outside any
 * transaction), and apply brings Tally to what Stripe says: funds withdrawn (a negative balance
 * transaction, or this event says so) → the withdrawal row exists; reinstated (a positive one, or
 * this event) → it is reinstated too. So a reinstatement delivered before its withdrawal applies
 * both, and the withdrawal then finds nothing to do. The stripe_disputes row (primary key) and its
 * conditional reinstatement are the fences; the references a second one.
 */
export function createDisputeFundsRoute(deps: { ports: ProviderPorts }) {
  return defineRoute<StripeEvent, DisputeRead>({
    async prepare(event) {
      const disputeId = event.data.object.id;
      if (!disputeId) throw new InvalidEventError('dispute without id');
      const stripe = deps.ports.stripe;
      if (!stripe) throw new NotConfiguredError('Stripe API (STRIPE_SECRET_KEY), which re-reads disputes');
      const dispute = await stripe.retrieveDispute(disputeId);
      const paymentIntentId = stripeIdOf(dispute.payment_intent);
      if (paymentIntentId === null) return { dispute, invoice: { kind: 'found', invoiceId: null } };
      try {
        return {
          dispute,
          invoice: { kind: 'found', invoiceId: await stripe.findInvoiceOfPaymentIntent(paymentIntentId) },
        };
      } catch (error) {
        return { dispute, invoice: { kind: 'failed', error } };
      }
    },
    async apply(uow, event, read, row) {
      const { trx } = uow;
      const { dispute } = read;
      const disputeId = stripeIdOf(dispute.id);
      if (disputeId === null) throw new InvalidEventError('Stripe answered a dispute without id');
      const status = stripeStringAt(dispute, 'status') ?? 'unknown';
      const paymentIntentId = stripeIdOf(dispute.payment_intent);
      if (paymentIntentId === null) {
        return ignored('unknown_payment', `dispute ${disputeId} names no payment intent`);
      }
      let payment = await lockPayment(trx, paymentIntentId);
      if (!payment) {
        if (read.invoice.kind === 'failed') throw read.invoice.error;
        if (read.invoice.invoiceId !== null) {
          const invoicePayment = await lockPayment(trx, read.invoice.invoiceId);
          // A dispute of an invoice whose invoice.paid has not been applied yet waits for it too.
          if (invoicePayment?.kind !== 'subscription_invoice') {
            // guard: dispute-waits-for-invoice
            return retryLater(`invoice ${read.invoice.invoiceId} of dispute ${disputeId} is not recorded yet`);
          }
          payment = invoicePayment;
        }
      }
      // A dispute can be delivered before the payment it disputes is recorded: wait for it.
      if (!payment) return retryLater(`payment ${paymentIntentId} of dispute ${disputeId} is not recorded yet`);

      const funds = disputeFundsOf(dispute);
      const reinstated = funds.reinstated || event.type === 'charge.dispute.funds_reinstated';
      const withdrawn = funds.withdrawn || event.type === 'charge.dispute.funds_withdrawn' || reinstated;
      const chargeId = stripeIdOf(dispute.charge);
      const steps: string[] = [];

      let record = await trx
        .selectFrom('stripe_disputes')
        .selectAll()
        .where('dispute_id', '=', disputeId)
        .forUpdate()
        .executeTakeFirst();
      if (withdrawn && !record) {
        const voided = await voidInvoiceInstallments(trx, payment, disputeId);
        const granted = await tokensGrantedByPayment(trx, payment);
        const owed = Math.max(0, granted - tokensAccountedOf(payment));
        // A hold that lapsed unsettled on a voided lot left tokens there that are not the user's: settle
        // lapsed holds first (their voided part taken, the rest settling older shortfalls), so the
        // take-back never takes them as the user's (docs/lots.md "Voids"). Locks the wallet, after the
        // payment, in the order the take-back takes them anyway.
        // guard: dispute-settles-lapsed-holds
        await lockWalletFunds(uow, payment.user_id);
        const { taken, shortfall } = await takeBackPaymentTokens(uow, {
          payment,
          owed,
          reference: references.stripeDispute(disputeId),
          reason: 'stripe_dispute',
          inboxEventId: row.id,
          source: { source: 'stripe_dispute', sourceId: disputeId },
        });
        record = await trx
          .insertInto('stripe_disputes')
          .values({
            dispute_id: disputeId,
            payment_id: payment.id,
            user_id: payment.user_id,
            charge_id: chargeId,
            status,
            tokens_owed: owed,
            tokens_taken: taken,
            withdrawn_inbox_event_id: row.id,
          })
          .returningAll()
          .executeTakeFirstOrThrow();
        steps.push(
          `took back ${taken} of ${owed} tokens owed under ${references.stripeDispute(disputeId)}${
            shortfall > 0 ? `; shortfall ${shortfall}` : ''
          }${voided > 0 ? `; ${voided} installments voided` : ''}`,
        );
      }
      if (reinstated && record && record.reinstated_at === null) {
        const { givenBack, keptForRefunds, rescheduled } = await reinstate(uow, { payment, record, row });
        steps.push(
          `gave back ${givenBack} of ${record.tokens_taken} tokens taken under ${references.stripeDisputeReinstated(disputeId)}${
            keptForRefunds > 0 ? `; ${keptForRefunds} stay taken back for the payment's refunds` : ''
          }${rescheduled > 0 ? `; ${rescheduled} installments scheduled again` : ''}`,
        );
      }
      if (record) {
        await trx.updateTable('stripe_disputes').set({ status }).where('dispute_id', '=', disputeId).execute();
      }
      const of = `dispute ${disputeId} (${status}) of ${payment.kind} ${payment.provider_payment_id}`;
      if (steps.length === 0) {
        return withdrawn
          ? processed('dispute_already_applied', `${of}: already applied`)
          : ignored('dispute_no_funds_movement', `${of}: Stripe has neither withdrawn nor reinstated funds`);
      }
      return processed(
        reinstated ? 'dispute_funds_reinstated' : 'dispute_funds_withdrawn',
        `${of}: ${steps.join('; then ')}`,
      );
    },
  });
}

/** `charge.dispute.created|updated|closed`: recorded, no money moves (product.md). */
export const disputeStatusRoute = defineRoute<StripeEvent, undefined>({
  apply: async (_trx, event) =>
    ignored(
      'dispute_no_funds_movement',
      `${event.type} of ${event.data.object.id ?? '(no id)'}: money moves only when Stripe withdraws or reinstates the funds`,
    ),
});

/**
 * Undoes a chargeback as far as the payment still pays for it. The payment (re-read: locked by
 * the caller) has its take-backs accounted as `tokens_refunded + refund_shortfall`; after the
 * reinstatement they must account for exactly what its refunds take back (refundTargetOf: all
 * of it once refunded in full, a share once partly refunded, nothing otherwise), in whichever
 * order the refunds and the reinstatement came. The dispute releases the difference, at most its
 * own `tokens_owed`: first from its shortfall (tokens it could not take are forgiven before any
 * is given back), then from what it took, which is given back under
 * `stripe:dispute:{id}:reinstated` and recorded as `tokens_reinstated`. What the dispute took and
 * does not give back stays taken back for the refunds (`tokens_taken − tokens_reinstated`), and
 * its shortfall row stays open for what of its shortfall the refunds still owe.
 *
 * A dispute won and never refunded gives back all it took (as before); won and refunded in full,
 * nothing. The installments this dispute voided are scheduled again unless the invoice is
 * refunded in full (a refunded invoice's installments stay void) or the subscription has ended;
 * a partly refunded invoice's are already at their scaled share (scaleInvoiceInstallments
 * scales every installment not granted, voided ones included).
 */
async function reinstate(
  uow: UnitOfWork,
  input: {
    payment: PaymentRow;
    record: { dispute_id: string; tokens_owed: number; tokens_taken: number; shortfall: number };
    row: InboxEventRow;
  },
): Promise<{ givenBack: number; keptForRefunds: number; rescheduled: number }> {
  const { trx } = uow;
  const { record, row } = input;
  const payment = await trx
    .selectFrom('payments')
    .selectAll()
    .where('id', '=', input.payment.id)
    .executeTakeFirstOrThrow();
  const refundedInFull = payment.status === 'refunded';
  const refundsTake = refundTargetOf(await paymentGrantsOf(trx, payment), {
    full: refundedInFull,
    amount: payment.amount_minor,
    amountRefunded: payment.amount_refunded_minor,
  });
  // guard: reinstatement-minus-refunds
  const released = Math.min(record.tokens_owed, Math.max(0, tokensAccountedOf(payment) - refundsTake));
  // guard: reinstatement-shortfall-released
  const shortfallReleased = Math.min(record.shortfall, released);
  // guard: reinstatement-given-back
  const givenBack = Math.min(record.tokens_taken, released - shortfallReleased);
  if (givenBack > 0) {
    await postGiveBack(uow, {
      userId: payment.user_id,
      reference: references.stripeDisputeReinstated(record.dispute_id),
      amount: givenBack,
      reason: 'stripe_dispute_reinstated',
      of: references.stripeDispute(record.dispute_id),
      inboxEventId: row.id,
    });
  }
  await trx
    .updateTable('payments')
    .set({
      tokens_refunded: sql`tokens_refunded - ${givenBack}`,
      refund_shortfall: sql`refund_shortfall - ${shortfallReleased}`,
      updated_at: sql`now()`,
    })
    .where('id', '=', payment.id)
    .execute();
  await trx
    .updateTable('stripe_disputes')
    .set({ tokens_reinstated: givenBack, reinstated_at: sql`now()`, reinstated_inbox_event_id: row.id })
    .where('dispute_id', '=', record.dispute_id)
    .where('reinstated_at', 'is', null)
    .execute();
  await releaseTakeBackShortfall(
    uow,
    {
      source: 'stripe_dispute',
      sourceId: record.dispute_id,
      reference: references.stripeDisputeReinstated(record.dispute_id),
    },
    shortfallReleased,
  );
  const keptForRefunds = record.tokens_taken - givenBack;
  // guard: reinstatement-refunded-installments
  if (payment.kind !== 'subscription_invoice' || refundedInFull) return { givenBack, keptForRefunds, rescheduled: 0 };
  const subscription = await trx
    .selectFrom('stripe_installments')
    .innerJoin('stripe_subscriptions', 'stripe_subscriptions.subscription_id', 'stripe_installments.subscription_id')
    .select('stripe_subscriptions.status')
    .where('stripe_installments.invoice_id', '=', payment.provider_payment_id)
    .executeTakeFirst();
  if (!subscription || isEndedStripeStatus(subscription.status)) return { givenBack, keptForRefunds, rescheduled: 0 };
  const rescheduled = await trx
    .updateTable('stripe_installments')
    .set({ status: 'scheduled', voided_by_dispute_id: null, updated_at: sql`now()` })
    .where('invoice_id', '=', payment.provider_payment_id)
    .where('status', '=', 'void')
    .where('voided_by_dispute_id', '=', record.dispute_id)
    .executeTakeFirst();
  return { givenBack, keptForRefunds, rescheduled: Number(rescheduled.numUpdatedRows) };
}
