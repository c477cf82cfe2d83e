import { sql, type Transaction } from 'kysely';
import type { DB, InboxEventRow, PaymentRow } from '../../../db/schema';
import { InvalidEventError, NotConfiguredError } from '../../../errors';
import { ignored, processed, retryLater } from '../../../inbox/inbox-handler';
import { voidInvoiceInstallments } from '../../../installments/void-invoice-installments';
import { postLedgerEntry } from '../../../ledger/post-ledger-entry';
import { lockPayment } from '../../../payments/lock-payment';
import type { ProviderPorts } from '../../../ports/provider-ports';
import { disputeFundsOf, type StripeJson, stripeIdOf, stripeStringAt } from '../../../provider-data/stripe-objects';
import { references } from '../../../references';
import {
  takeBackPaymentTokens,
  tokensAccountedOf,
  tokensGrantedByPayment,
} from '../../../refunds/take-back-payment-tokens';
import { closeTakeBackShortfalls } from '../../../refunds/take-back-shortfalls';
import { isEndedStripeStatus } from '../../../subscriptions/save-stripe-subscription';
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
 * back exactly what was taken, under `stripe:dispute:{id}:reinstated`, and schedules again the
 * installments the dispute voided (unless the subscription has ended).
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
    async apply(trx, event, read, row) {
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
          payment = await lockPayment(trx, read.invoice.invoiceId);
          if (payment?.kind !== 'subscription_invoice') {
            return ignored(
              'unknown_payment',
              `dispute ${disputeId} is of invoice ${read.invoice.invoiceId}, which is not a recorded payment`,
            );
          }
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
        const { taken, shortfall } = await takeBackPaymentTokens(trx, {
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
        const rescheduled = await reinstate(trx, { payment, record, row });
        steps.push(
          `gave back ${record.tokens_taken} tokens under ${references.stripeDisputeReinstated(disputeId)}${
            rescheduled > 0 ? `; ${rescheduled} installments scheduled again` : ''
          }`,
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
 * Gives back exactly what the withdrawal took, restores the payment's accounting, and schedules
 * again the installments this dispute voided (unless the subscription has ended since).
 */
async function reinstate(
  trx: Transaction<DB>,
  input: {
    payment: PaymentRow;
    record: { dispute_id: string; tokens_taken: number; shortfall: number };
    row: InboxEventRow;
  },
): Promise<number> {
  const { payment, record, row } = input;
  if (record.tokens_taken > 0) {
    await postLedgerEntry(trx, {
      userId: payment.user_id,
      reference: references.stripeDisputeReinstated(record.dispute_id),
      amount: record.tokens_taken,
      reason: 'stripe_dispute_reinstated',
      inboxEventId: row.id,
    });
  }
  await trx
    .updateTable('payments')
    .set({
      tokens_refunded: sql`tokens_refunded - ${record.tokens_taken}`,
      refund_shortfall: sql`refund_shortfall - ${record.shortfall}`,
      updated_at: sql`now()`,
    })
    .where('id', '=', payment.id)
    .execute();
  await trx
    .updateTable('stripe_disputes')
    .set({ tokens_reinstated: record.tokens_taken, reinstated_at: sql`now()`, reinstated_inbox_event_id: row.id })
    .where('dispute_id', '=', record.dispute_id)
    .where('reinstated_at', 'is', null)
    .execute();
  await closeTakeBackShortfalls(trx, { source: 'stripe_dispute', sourceId: record.dispute_id });
  if (payment.kind !== 'subscription_invoice') return 0;
  const subscription = await trx
    .selectFrom('stripe_installments')
    .innerJoin('stripe_subscriptions', 'stripe_subscriptions.subscription_id', 'stripe_installments.subscription_id')
    .select('stripe_subscriptions.status')
    .where('stripe_installments.invoice_id', '=', payment.provider_payment_id)
    .executeTakeFirst();
  if (!subscription || isEndedStripeStatus(subscription.status)) return 0;
  const rescheduled = await trx
    .updateTable('stripe_installments')
    .set({ status: 'scheduled', voided_by_dispute_id: null, updated_at: sql`now()` })
    .where('invoice_id', '=', payment.provider_payment_id)
    .where('status', '=', 'void')
    .where('voided_by_dispute_id', '=', record.dispute_id)
    .executeTakeFirst();
  return Number(rescheduled.numUpdatedRows);
}
