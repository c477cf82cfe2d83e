import type { Catalog } from '../../../catalog/catalog';
import { InvalidEventError, NotConfiguredError } from '../../../errors';
import { fileEventUnderUser } from '../../../inbox/file-event-under-user';
import { ignored, processed } from '../../../inbox/inbox-handler';
import type { GooglePlaySubscriptionPurchase } from '../../../ports/google-play-api';
import type { ProviderPorts } from '../../../ports/provider-ports';
import type { EventPolicy } from '../../../provider-data/payment-environment';
import { findUserByGoogleAccountId } from '../../../stores/store-accounts';
import { applySubscriptionState } from '../../../subscriptions/apply-subscription-state';
import {
  desiredGooglePlaySubscription,
  environmentOfSubscription,
} from '../../../subscriptions/desired-google-play-subscription';
import { lockUser } from '../../../users/lock-user';
import { defineRoute } from '../../shared/create-provider-handler';
import type { GooglePlayEvent } from '../google-play-notification';

interface SubscriptionRead {
  subscription: GooglePlaySubscriptionPurchase;
  /** When Google answered: orders two reads of one subscription (an older one is dropped). */
  readAt: Date;
}

/**
 * Every subscription notification, whatever its type and order, converges on Google's state:
 * prepare re-reads `purchases.subscriptionsv2.get` for the purchase token (outside any
 * transaction); apply finds the user by the subscription's `obfuscatedExternalAccountId`, locks
 * them and applies the plan of `plans[].googlePlayProducts` through applySubscriptionState, as
 * RevenueCat's path does (nothing written when already synchronized, a read older than the last
 * applied dropped).
 */
export function createSubscriptionNotificationRoute(deps: {
  catalog: Catalog;
  ports: ProviderPorts;
  policy: EventPolicy;
}) {
  return defineRoute<GooglePlayEvent, SubscriptionRead>({
    environmentCheck: 'api',
    async prepare(event) {
      const notification = event.notification.subscriptionNotification;
      if (!notification) throw new InvalidEventError(`${event.type} without subscriptionNotification`);
      const api = deps.ports.googlePlay;
      if (!api) throw new NotConfiguredError('the Play Developer API (GOOGLE_SERVICE_ACCOUNT_KEY_PATH)');
      const subscription = await api.getSubscriptionPurchase(notification.purchaseToken);
      return { subscription, readAt: new Date() };
    },
    async apply(uow, event, { subscription, readAt }, row) {
      const environment = environmentOfSubscription(subscription);
      if (!deps.policy.paymentEnvironments.has(environment)) {
        return ignored(
          'other_environment',
          `${environment} subscription (a licence tester's); this deployment accepts ${[...deps.policy.paymentEnvironments].join(', ')}`,
        );
      }
      const { trx } = uow;
      const accountId = subscription.externalAccountIdentifiers?.obfuscatedExternalAccountId;
      const userId = await findUserByGoogleAccountId(trx, accountId);
      if (userId === null)
        return ignored('no_user', `${event.type}: the subscription names no Google account id Tally gave`);
      await fileEventUnderUser(trx, row.id, userId);
      await lockUser(trx, userId);
      const desired = desiredGooglePlaySubscription(subscription, { catalog: deps.catalog, now: readAt });
      const result = await applySubscriptionState(uow, {
        userId,
        source: 'google_play',
        desired,
        readAt,
        cause: { kind: 'inbox_event', inboxEventId: row.id },
      });
      if (result.kind !== 'changed') {
        return processed(
          'already_synchronized',
          `${userId}: ${result.kind.replaceAll('_', ' ')} (${subscription.subscriptionState})`,
        );
      }
      const { subscription: saved } = result;
      return processed(
        'subscription_synced',
        `${userId}: ${result.change} (${saved.plan_id ?? 'no plan'}, ${subscription.subscriptionState}, expires ${saved.expires_at?.toISOString() ?? 'n/a'})`,
      );
    },
  });
}
