import type { Catalog } from '../../catalog/catalog';
import { ignored } from '../../inbox/inbox-handler';
import type { ProviderPorts } from '../../ports/provider-ports';
import { type AppleNotification, parseAppleNotification } from '../../provider-data/apple-signed-data';
import type { EventPolicy } from '../../provider-data/payment-environment';
import { createProviderHandler, defineRoute, type EventRoute } from '../shared/create-provider-handler';
import { createConsumptionRequestRoute } from './routes/consumption-request';
import { createOneTimeChargeRoute } from './routes/one-time-charge';
import { createRefundRoute } from './routes/refund-events';
import { appleSubscriptionNotificationTypes, createSubscriptionStatusRoute } from './routes/subscription-status';

export interface AppleHandlerDeps {
  catalog: Catalog;
  ports: ProviderPorts;
  policy: EventPolicy;
}

/** The App Store notification types with a route (metrics label them by name; others are 'other'). */
export const appleHandledEventTypes: readonly string[] = [
  'ONE_TIME_CHARGE',
  'REFUND',
  'REFUND_REVERSED',
  'REFUND_DECLINED',
  'CONSUMPTION_REQUEST',
  'TEST',
  ...appleSubscriptionNotificationTypes,
];

/**
 * Apple's routing table (docs/stores-apple.md): one route per notification family; unknown
 * types are recorded and ignored. The environment policy applies to every route by the
 * notification's own environment (`Sandbox` is the sandbox one).
 */
export function createAppleHandler(deps: AppleHandlerDeps) {
  const subscriptionStatus = createSubscriptionStatusRoute(deps);
  const routes: Record<string, EventRoute<AppleNotification, unknown>> = {
    ONE_TIME_CHARGE: createOneTimeChargeRoute(deps),
    REFUND: createRefundRoute(deps, 'refund'),
    REFUND_REVERSED: createRefundRoute(deps, 'reversal'),
    REFUND_DECLINED: defineRoute<AppleNotification, undefined>({
      apply: async (_uow, notification) =>
        ignored(
          'refund_declined',
          `Apple declined the refund of transaction ${notification.transaction?.transactionId ?? '(none)'}; nothing moves`,
        ),
    }),
    CONSUMPTION_REQUEST: createConsumptionRequestRoute(deps),
    TEST: defineRoute<AppleNotification, undefined>({
      environmentCheck: 'none',
      apply: async () => ignored('test_event', 'App Store test notification'),
    }),
  };
  for (const type of appleSubscriptionNotificationTypes) routes[type] = subscriptionStatus;
  return createProviderHandler<AppleNotification>({
    parse: parseAppleNotification,
    typeOf: (notification) => notification.type,
    routes,
    fallback: defineRoute<AppleNotification, undefined>({
      apply: async (_uow, notification) =>
        ignored('unhandled_type', `notification type ${notification.type} is not handled`),
    }),
    policy: deps.policy,
  });
}
