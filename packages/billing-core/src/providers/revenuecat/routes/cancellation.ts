import type { Catalog } from '../../../catalog/catalog';
import { defineRoute, type EventRoute } from '../../shared/create-provider-handler';
import type { RevenueCatEvent } from '../revenuecat-event';

type Prepared = { kind: 'refund'; prepared: unknown } | { kind: 'subscription'; prepared: unknown };

/**
 * CANCELLATION means two things at RevenueCat: a subscription that will not renew (or was
 * refunded), which the subscription sync handles; and a refunded consumable, which takes a token
 * pack's tokens back. The product decides which.
 */
export function createCancellationRoute(deps: {
  catalog: Catalog;
  subscriptionEvents: EventRoute<RevenueCatEvent, unknown>;
  tokenPackRefund: EventRoute<RevenueCatEvent, unknown>;
}) {
  const isPackRefund = (event: RevenueCatEvent) =>
    deps.catalog.findTokenPackByRevenueCatProduct(event.product_id ?? '') !== undefined;
  const routeOf = (event: RevenueCatEvent) => (isPackRefund(event) ? deps.tokenPackRefund : deps.subscriptionEvents);
  const checkOf = (route: EventRoute<RevenueCatEvent, unknown>, event: RevenueCatEvent) => {
    const check = route.environmentCheck ?? 'event';
    return typeof check === 'function' ? check(event) : check;
  };
  return defineRoute<RevenueCatEvent, Prepared>({
    // A refund carries money itself (its environment must be accepted); a subscription
    // cancellation is re-read from the API.
    environmentCheck: (event) => checkOf(routeOf(event), event),
    async prepare(event, row, ctx) {
      const kind = isPackRefund(event) ? 'refund' : 'subscription';
      const route = routeOf(event);
      return { kind, prepared: route.prepare ? await route.prepare(event, row, ctx) : undefined };
    },
    apply(uow, event, prepared, row) {
      const route = prepared.kind === 'refund' ? deps.tokenPackRefund : deps.subscriptionEvents;
      return route.apply(uow, event, prepared.prepared, row);
    },
  });
}
