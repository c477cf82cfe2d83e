import type { Catalog } from '../../../catalog/catalog';
import { InvalidEventError } from '../../../errors';
import { ignored, processed, retryLater } from '../../../inbox/inbox-handler';
import { scheduleInstallments } from '../../../installments/schedule-installments';
import { voidFutureInstallments } from '../../../installments/void-future-installments';
import { recordPayment } from '../../../payments/record-payment';
import {
  invoiceLinePeriodEndOf,
  invoicePriceIdsOf,
  invoiceSubscriptionIdOf,
  stripeNumberAt,
  stripeStringAt,
} from '../../../provider-data/stripe-objects';
import { references } from '../../../references';
import { isEndedStripeStatus } from '../../../subscriptions/save-stripe-subscription';
import { defineRoute } from '../../shared/create-provider-handler';
import type { StripeEvent } from '../stripe-event';

/**
 * `invoice.paid` of a subscription: the only source of subscription credits, under
 * `stripe:invoice:{invoiceId}`, so a checkout and its first invoice never grant twice. The plan
 * comes from the invoice's price through the catalog; a monthly price grants creditsPerPeriod,
 * an annual one grants a twelfth now and schedules eleven monthly installments. The user comes
 * from the subscription Tally already holds: until its `customer.subscription.*` event (or the
 * checkout) has been applied, the invoice waits (retry later) and converges when it arrives.
 * An annual invoice applied after its subscription has already ended (the deletion arrived or was
 * applied first) still grants its twelfth, and its installments are voided at once, as the
 * deletion would have voided them had it come second: the result does not depend on the order.
 */
export function createInvoicePaidRoute(deps: { catalog: Catalog }) {
  return defineRoute<StripeEvent, undefined>({
    async apply(uow, event, _prepared, row) {
      const { trx } = uow;
      const invoice = event.data.object;
      const invoiceId = invoice.id;
      if (!invoiceId) throw new InvalidEventError('invoice without id');
      const subscriptionId = invoiceSubscriptionIdOf(invoice);
      if (subscriptionId === null)
        return ignored('not_a_subscription_invoice', `invoice ${invoiceId} has no subscription`);
      if (invoice.status !== undefined && invoice.status !== 'paid') {
        return ignored('invoice_not_paid', `invoice ${invoiceId} is ${String(invoice.status)}`);
      }
      const match = invoicePriceIdsOf(invoice)
        .map((priceId) => deps.catalog.findPlanByStripePrice(priceId))
        .find((found) => found !== undefined);
      if (!match) throw new InvalidEventError(`invoice ${invoiceId} names no catalog plan price`);
      // Locked, because an invoice usually names no user and so runs beside its subscription's
      // events (no per-user lock). The deletion updates this row (saveStripeSubscription) before
      // it voids installments: whichever takes the row first, the other waits for its commit. An
      // invoice that comes second sees the ended status and voids its own installments; a deletion
      // that comes second voids installments this invoice has committed. Without the lock, an
      // invoice could read `active` while the deletion voided without seeing this invoice's
      // uncommitted installments, and eleven would stay scheduled on a canceled subscription.
      const subscription = await trx
        .selectFrom('stripe_subscriptions')
        .select(['user_id', 'subscription_id', 'status'])
        .where('subscription_id', '=', subscriptionId)
        .forUpdate()
        .executeTakeFirst();
      if (!subscription) return retryLater(`subscription ${subscriptionId} of invoice ${invoiceId} is not known yet`);

      const annual = match.price.interval === 'year';
      const tokens = annual ? match.price.creditsPerPeriod / 12 : match.price.creditsPerPeriod;
      // creditsExpire period_end: a monthly grant expires at its invoice line's period end, an
      // annual plan's first twelfth when the first installment is due (a month from now).
      // guard: invoice-lot-period-end
      const expiring = match.price.creditsExpire === 'period_end';
      const lineEnd = invoiceLinePeriodEndOf(invoice, match.price.priceId);
      if (expiring && !annual && lineEnd === null) {
        throw new InvalidEventError(`invoice ${invoiceId} has no line period end for ${match.price.priceId}`);
      }
      const lotExpiry = !expiring ? null : annual ? { months: 1, after: 'now' as const } : lineEnd;
      const recorded = await recordPayment(uow, {
        providerPaymentId: invoiceId,
        userId: subscription.user_id,
        kind: 'subscription_invoice',
        productId: match.plan.id,
        amountMinor: stripeNumberAt(invoice, 'amount_paid') ?? 0,
        currency: stripeStringAt(invoice, 'currency') ?? 'usd',
        ledgerReference: references.stripeInvoice(invoiceId),
        tokens,
        ledgerReason: annual ? 'subscription_annual_first_installment' : 'subscription_period',
        // rolloverMax only matters for a lot that expires (the sweeper rolls it over then).
        // guard: invoice-lot-rollover
        lot: { category: 'subscription', expiresAt: lotExpiry, rolloverMax: match.price.rolloverMax },
        customerEmail: stripeStringAt(invoice, 'customer_email'),
        inboxEventId: row.id,
        email: {
          subject: 'Your subscription payment',
          text: `Thank you: your ${match.plan.id} subscription is paid and ${tokens} tokens were added to your wallet.`,
        },
      });
      const scheduled = annual
        ? await scheduleInstallments(trx, {
            subscriptionId,
            invoiceId,
            userId: subscription.user_id,
            tokensPerInstallment: tokens,
            creditsExpire: match.price.creditsExpire,
            rolloverMax: match.price.rolloverMax,
          })
        : 0;
      const voided =
        annual && isEndedStripeStatus(subscription.status) ? await voidFutureInstallments(trx, subscriptionId) : 0;
      const installments =
        voided > 0
          ? `; ${scheduled} installments scheduled, ${voided} voided (subscription ${subscription.status})`
          : `; ${scheduled} installments scheduled`;
      return recorded.ledger.kind === 'posted'
        ? processed('credited', `credited ${tokens} tokens for ${match.plan.id}${annual ? installments : ''}`)
        : processed('already_credited', `invoice ${invoiceId} already credited`);
    },
  });
}
