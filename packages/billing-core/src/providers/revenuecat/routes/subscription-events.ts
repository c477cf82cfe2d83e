import type { Catalog } from '../../../catalog/catalog';
import { NotConfiguredError } from '../../../errors';
import { ignored, processed } from '../../../inbox/inbox-handler';
import type { ProviderPorts } from '../../../ports/provider-ports';
import type { RevenueCatSubscriberRead } from '../../../ports/revenuecat-api';
import type { EventPolicy } from '../../../provider-data/payment-environment';
import { applyRevenueCatSubscriberRead } from '../../../subscriptions/sync-revenuecat-subscriber';
import { linkableIds, linkUserIds } from '../../../users/link-user-ids';
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

/** One RevenueCat customer the event names: the ids it goes by, and the id Tally reads it by. */
interface CustomerGroup {
  ids: string[];
  readId: string;
}

interface PreparedSync {
  reads: { group: CustomerGroup; read: RevenueCatSubscriberRead }[];
}

/**
 * The customers an event names. A TRANSFER moves purchases between distinct customers: each id
 * of `transferred_from` and `transferred_to` is its own customer. Any other event names one
 * customer by `app_user_id`, `original_app_user_id` and `aliases` (all linked together), read by
 * `app_user_id`. Every id here came from RevenueCat, so reading it cannot create a customer.
 */
function customersOf(event: RevenueCatEvent): CustomerGroup[] {
  if (event.type === 'TRANSFER') {
    return linkableIds([...(event.transferred_from ?? []), ...(event.transferred_to ?? [])]).map((id) => ({
      ids: [id],
      readId: id,
    }));
  }
  const ids = linkableIds([event.app_user_id, event.original_app_user_id, ...(event.aliases ?? [])]);
  const readId = ids[0];
  return readId === undefined ? [] : [{ ids, readId }];
}

/**
 * Every subscription event, whatever its type and order, converges on RevenueCat's truth:
 * prepare (outside any transaction) re-reads `GET /v1/subscribers/{id}` for every customer the
 * event names; apply links each customer's ids to its canonical user, locks those users and
 * writes the synced state (nothing when already synchronized). 429 → retry later after
 * Retry-After; 5xx/network → retried with backoff; a missing API key parks as not_configured.
 */
export function createSubscriptionEventsRoute(deps: { catalog: Catalog; ports: ProviderPorts; policy: EventPolicy }) {
  return defineRoute<RevenueCatEvent, PreparedSync>({
    environmentCheck: 'api',
    async prepare(event) {
      const groups = customersOf(event);
      if (groups.length === 0) return { reads: [] };
      const api = deps.ports.revenueCat;
      if (!api) throw new NotConfiguredError('RevenueCat API (REVENUECAT_API_KEY)');
      const reads: PreparedSync['reads'] = [];
      for (const group of groups) reads.push({ group, read: await api.getSubscriber(group.readId) });
      return { reads };
    },
    async apply(trx, event, prepared, row, ctx) {
      if (prepared.reads.length === 0) return ignored('no_user', `${event.type} names no app user id`);
      const linked: { userId: string; read: RevenueCatSubscriberRead }[] = [];
      for (const { group, read } of prepared.reads) {
        linked.push({ userId: await linkUserIds(trx, group.ids, { inboxEventId: row.id }), read });
      }
      await lockUsers(
        trx,
        linked.map((entry) => entry.userId),
      );
      const outcomes: string[] = [];
      let changed = false;
      for (const { userId, read } of linked) {
        const result = await applyRevenueCatSubscriberRead(
          trx,
          { catalog: deps.catalog, policy: deps.policy, clock: ctx.clock },
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
