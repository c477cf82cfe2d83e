import type { Catalog } from '../../../catalog/catalog';
import { NotConfiguredError } from '../../../errors';
import { ignored, processed } from '../../../inbox/inbox-handler';
import type { ProviderPorts } from '../../../ports/provider-ports';
import type { RevenueCatSubscriberRead } from '../../../ports/revenuecat-api';
import type { EventPolicy } from '../../../provider-data/payment-environment';
import { applyRevenueCatSubscriberRead } from '../../../subscriptions/sync-revenuecat-subscriber';
import { linkableIds, linkUserIds, revenueCatConfirmedIds } from '../../../users/link-user-ids';
import { lockUsers } from '../../../users/lock-user';
import { defineRoute } from '../../shared/create-provider-handler';
import type { RevenueCatEvent } from '../revenuecat-event';

/**
 * Subscription event types. They are notifications that the subscriber changed; the truth is
 * re-read from RevenueCat's REST API (see product.md), which also says which subscriptions are
 * sandbox ones, so these run even when the event names no environment.
 */
export const revenueCatSubscriptionEventTypes = [
  'INITIAL_PURCHASE',
  'RENEWAL',
  'PRODUCT_CHANGE',
  'UNCANCELLATION',
  'CANCELLATION',
  'BILLING_ISSUE',
  'SUBSCRIPTION_EXTENDED',
  'SUBSCRIPTION_PAUSED',
  'EXPIRATION',
  'TRANSFER',
  'TEMPORARY_ENTITLEMENT_GRANT',
  'REFUND_REVERSED',
] as const;

interface PreparedSync {
  /** Per customer: the id read, and RevenueCat's answer. */
  reads: { readId: string; read: RevenueCatSubscriberRead }[];
}

/**
 * The ids Tally reads an event's customers by, one per customer. A TRANSFER moves purchases
 * between distinct customers: each id of `transferred_from` and `transferred_to` is its own
 * customer. Any other event names one customer, read by `app_user_id` (else the first id it
 * names). Every id here came from RevenueCat, so reading it cannot create a customer. The body's
 * other ids (`original_app_user_id`, `aliases`) are not linked: only the read's are.
 */
function readIdsOf(event: RevenueCatEvent): string[] {
  if (event.type === 'TRANSFER') {
    return linkableIds([...(event.transferred_from ?? []), ...(event.transferred_to ?? [])]);
  }
  const readId = linkableIds([event.app_user_id, event.original_app_user_id, ...(event.aliases ?? [])])[0];
  return readId === undefined ? [] : [readId];
}

/**
 * Every subscription event, whatever its type and order, converges on RevenueCat's truth:
 * prepare (outside any transaction) re-reads `GET /v1/subscribers/{id}` for every customer the
 * event names; apply links the ids each read confirms (the id read and RevenueCat's
 * `original_app_user_id`, never the body's aliases) to a canonical user, locks those users and
 * writes the synced state (nothing when already synchronized). 429 → retry later after
 * Retry-After; 5xx/network → retried with backoff; a missing API key parks as not_configured.
 */
export function createSubscriptionEventsRoute(deps: { catalog: Catalog; ports: ProviderPorts; policy: EventPolicy }) {
  return defineRoute<RevenueCatEvent, PreparedSync>({
    environmentCheck: 'api',
    async prepare(event) {
      const readIds = readIdsOf(event);
      if (readIds.length === 0) return { reads: [] };
      const api = deps.ports.revenueCat;
      if (!api) throw new NotConfiguredError('RevenueCat API (REVENUECAT_API_KEY)');
      const reads: PreparedSync['reads'] = [];
      for (const readId of readIds) reads.push({ readId, read: await api.getSubscriber(readId) });
      return { reads };
    },
    async apply(uow, event, prepared, row) {
      const { trx } = uow;
      if (prepared.reads.length === 0) return ignored('no_user', `${event.type} names no app user id`);
      const linked: { userId: string; read: RevenueCatSubscriberRead }[] = [];
      for (const { readId, read } of prepared.reads) {
        // guard: revenuecat-subscription-confirmed-ids
        const ids = revenueCatConfirmedIds(readId, read.subscriber);
        linked.push({ userId: await linkUserIds(uow, ids, { inboxEventId: row.id }), read });
      }
      await lockUsers(
        trx,
        linked.map((entry) => entry.userId),
      );
      const outcomes: string[] = [];
      let changed = false;
      for (const { userId, read } of linked) {
        const result = await applyRevenueCatSubscriberRead(
          uow,
          { catalog: deps.catalog, policy: deps.policy },
          { userId, read, cause: { kind: 'inbox_event', inboxEventId: row.id } },
        );
        if (result.kind === 'changed') {
          changed = true;
          const subscription = result.subscription;
          outcomes.push(
            `${userId}: ${result.change} (${subscription.plan_id ?? 'no plan'}, expires ${subscription.expires_at?.toISOString() ?? (subscription.status === 'active' ? 'never' : 'n/a')})`,
          );
        } else {
          outcomes.push(`${userId}: ${result.kind.replaceAll('_', ' ')}`);
        }
      }
      return processed(changed ? 'subscription_synced' : 'already_synchronized', outcomes.join('; '));
    },
  });
}
