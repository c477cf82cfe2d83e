import type { Catalog } from '../../../catalog/catalog';
import { InvalidEventError, NotConfiguredError } from '../../../errors';
import { type HandlerResult, ignored, processed, retryLater } from '../../../inbox/inbox-handler';
import type { ProviderPorts } from '../../../ports/provider-ports';
import { type StripeJson, stripeIdOf, stripeMetadataOf } from '../../../provider-data/stripe-objects';
import { saveStripeSubscription } from '../../../subscriptions/save-stripe-subscription';
import { defineRoute } from '../../shared/create-provider-handler';
import { findUserByStripeCustomer, rememberStripeCustomer, withCustomerMappingNote } from '../stripe-customers';
import type { StripeEvent } from '../stripe-event';

/**
 * `customer.subscription.created|updated|deleted` are notifications, not truth: prepare re-reads
 * the subscription from the Stripe API (outside the transaction) and apply writes what the API
 * said, so an `updated` before its `created`, or a stale `updated` after a `deleted`, converge on
 * Stripe's current state. The user is the subscription's `metadata.user_id`, else the user its
 * customer was seen with; when neither is known yet the event waits (retry later).
 */
export function createSubscriptionEventsRoute(deps: { catalog: Catalog; ports: ProviderPorts }) {
  return defineRoute<StripeEvent, { subscription: StripeJson; readAt: Date }>({
    async prepare(event, _row, ctx) {
      const subscriptionId = event.data.object.id;
      if (!subscriptionId) throw new InvalidEventError('subscription event without subscription id');
      const stripe = deps.ports.stripe;
      if (!stripe) throw new NotConfiguredError('the Stripe API (STRIPE_SECRET_KEY)');
      // Stamped before the request: a read started later reflects a state at least as new.
      const readAt = ctx.clock.now();
      return { subscription: await stripe.retrieveSubscription(subscriptionId), readAt };
    },
    async apply(uow, _event, { subscription, readAt }) {
      const { trx } = uow;
      const customerId = stripeIdOf(subscription.customer);
      const userId = stripeMetadataOf(subscription, 'user_id') ?? (await findUserByStripeCustomer(trx, customerId));
      if (userId === null) {
        return retryLater(
          `the user of subscription ${String(subscription.id)} (customer ${customerId}) is not known yet`,
        );
      }
      const mapping = await rememberStripeCustomer(uow, customerId, userId);
      const noted = (result: HandlerResult) => withCustomerMappingNote(result, mapping, customerId, userId);
      const saved = await saveStripeSubscription(uow, { subscription, userId, catalog: deps.catalog, readAt });
      if (saved.stale) {
        return noted(
          ignored(
            'stale_read',
            `a newer read of subscription ${saved.row.subscription_id} (${saved.row.status}) was already applied`,
          ),
        );
      }
      if (saved.row.plan_id === null) {
        return noted(ignored('unknown_price', `subscription ${saved.row.subscription_id} has no catalog plan price`));
      }
      return noted(
        processed(
          'subscription_synced',
          `subscription ${saved.row.subscription_id} is ${saved.row.status} (${saved.row.plan_id})${
            saved.voidedInstallments > 0 ? `; ${saved.voidedInstallments} installments voided` : ''
          }`,
        ),
      );
    },
    environmentCheck: 'event',
  });
}
