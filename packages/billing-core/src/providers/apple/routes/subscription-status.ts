import type { Catalog } from '../../../catalog/catalog';
import { InvalidEventError, NotConfiguredError } from '../../../errors';
import { fileEventUnderUser } from '../../../inbox/file-event-under-user';
import { ignored, processed } from '../../../inbox/inbox-handler';
import type { AppleSubscriptionStatus } from '../../../ports/app-store-api';
import type { ProviderPorts } from '../../../ports/provider-ports';
import type { AppleNotification } from '../../../provider-data/apple-signed-data';
import { paymentEnvironmentOf } from '../../../provider-data/payment-environment';
import { findUserByAppleAccountToken } from '../../../stores/store-accounts';
import { applySubscriptionState } from '../../../subscriptions/apply-subscription-state';
import { desiredAppleSubscription } from '../../../subscriptions/desired-apple-subscription';
import { lockUser } from '../../../users/lock-user';
import { defineRoute } from '../../shared/create-provider-handler';

/** The App Store notification types that say a subscription changed (the truth is re-read). */
export const appleSubscriptionNotificationTypes = [
  'SUBSCRIBED',
  'DID_RENEW',
  'DID_CHANGE_RENEWAL_PREF',
  'DID_CHANGE_RENEWAL_STATUS',
  'DID_FAIL_TO_RENEW',
  'EXPIRED',
  'GRACE_PERIOD_EXPIRED',
  'OFFER_REDEEMED',
  'PRICE_INCREASE',
  'RENEWAL_EXTENDED',
  'REVOKE',
] as const;

export interface SubscriptionRead {
  statuses: AppleSubscriptionStatus[];
  /** When the read started: a later read wins (applySubscriptionState's stale check). */
  readAt: Date;
}

/** Reads the statuses of the notification's subscription (outside any transaction). */
export function readAppleSubscription(deps: { ports: ProviderPorts }) {
  return async (notification: AppleNotification, row: Parameters<typeof paymentEnvironmentOf>[0], now: Date) => {
    const transaction = notification.transaction;
    if (!transaction) throw new InvalidEventError(`${notification.type} without signedTransactionInfo`);
    const api = deps.ports.appStore;
    if (!api)
      throw new NotConfiguredError('App Store Server API (APPLE_KEY_ID, APPLE_ISSUER_ID, APPLE_PRIVATE_KEY_PATH)');
    const environment = paymentEnvironmentOf(row);
    if (environment === null) throw new InvalidEventError('an App Store notification without its environment');
    const statuses = await api.getSubscriptionStatuses(environment, transaction.originalTransactionId);
    return { statuses, readAt: now } satisfies SubscriptionRead;
  };
}

/**
 * Writes what a subscription read says for the user whose appAccountToken the transaction (or
 * the read) carries, under the user's lock, as RevenueCat's path does: whatever the order of the
 * notifications, each re-reads the truth and the latest read wins.
 */
export async function applyAppleSubscriptionRead(
  uow: Parameters<typeof applySubscriptionState>[0],
  deps: { catalog: Catalog },
  input: { notification: AppleNotification; read: SubscriptionRead; inboxEventId: number },
) {
  const { notification, read } = input;
  const token =
    notification.transaction?.appAccountToken ??
    read.statuses.find((status) => status.transaction.appAccountToken)?.transaction.appAccountToken;
  const userId = await findUserByAppleAccountToken(uow.trx, token);
  if (userId === null) {
    return ignored(
      'unknown_account_token',
      `${notification.type}: the subscription names no appAccountToken Tally gave`,
    );
  }
  await fileEventUnderUser(uow.trx, input.inboxEventId, userId);
  await lockUser(uow.trx, userId);
  const desired = desiredAppleSubscription(read.statuses, { catalog: deps.catalog, now: uow.clock.now() });
  const result = await applySubscriptionState(uow, {
    userId,
    source: 'apple',
    desired,
    readAt: read.readAt,
    cause: { kind: 'inbox_event', inboxEventId: input.inboxEventId },
  });
  switch (result.kind) {
    case 'changed': {
      const { subscription } = result;
      return processed(
        'subscription_synced',
        `${userId}: ${result.change} (${subscription.plan_id ?? 'no plan'}, expires ${subscription.expires_at?.toISOString() ?? 'n/a'})`,
      );
    }
    case 'stale_read':
      return ignored('stale_read', `${userId}: a later App Store read was already applied`);
    default:
      return processed('already_synchronized', `${userId}: ${result.kind.replaceAll('_', ' ')}`);
  }
}

/**
 * Subscription notifications (SUBSCRIBED, DID_RENEW, EXPIRED, …) are notifications, not truth:
 * prepare re-reads `GET /inApps/v1/subscriptions/{originalTransactionId}` and apply brings the
 * user's `apple` subscription to the plan of `plans[].appStoreProducts` it shows.
 */
export function createSubscriptionStatusRoute(deps: { catalog: Catalog; ports: ProviderPorts }) {
  const read = readAppleSubscription(deps);
  return defineRoute<AppleNotification, SubscriptionRead>({
    prepare: (notification, row, ctx) => read(notification, row, ctx.clock.now()),
    apply: (uow, notification, prepared, row) =>
      applyAppleSubscriptionRead(uow, deps, { notification, read: prepared, inboxEventId: row.id }),
  });
}
