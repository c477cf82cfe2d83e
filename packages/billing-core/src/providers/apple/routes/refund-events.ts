import type { Catalog } from '../../../catalog/catalog';
import { InvalidEventError } from '../../../errors';
import { ignored } from '../../../inbox/inbox-handler';
import type { ProviderPorts } from '../../../ports/provider-ports';
import type { AppleNotification } from '../../../provider-data/apple-signed-data';
import { defineRoute } from '../../shared/create-provider-handler';
import { refundApplePack, reverseAppleRefund } from './pack-refund';
import { applyAppleSubscriptionRead, readAppleSubscription, type SubscriptionRead } from './subscription-status';

type RefundPrepared = { kind: 'pack' } | { kind: 'subscription'; read: SubscriptionRead } | { kind: 'other' };

/**
 * `REFUND` and `REFUND_REVERSED`, for any product type: a token pack's refund takes back (or
 * gives back) tokens (pack-refund.ts); a plan's is a subscription change like the others, re-read
 * from the App Store Server API; any other product is recorded and ignored.
 */
export function createRefundRoute(deps: { catalog: Catalog; ports: ProviderPorts }, action: 'refund' | 'reversal') {
  const readSubscription = readAppleSubscription(deps);
  return defineRoute<AppleNotification, RefundPrepared>({
    async prepare(notification, row, ctx) {
      const productId = notification.transaction?.productId ?? '';
      if (deps.catalog.findTokenPackByStoreProduct('appStore', productId)) return { kind: 'pack' };
      if (deps.catalog.findPlanByStoreProduct('appStore', productId)) {
        return { kind: 'subscription', read: await readSubscription(notification, row, ctx.clock.now()) };
      }
      return { kind: 'other' };
    },
    async apply(uow, notification, prepared, row) {
      const transaction = notification.transaction;
      if (!transaction) throw new InvalidEventError(`${notification.type} without signedTransactionInfo`);
      switch (prepared.kind) {
        case 'pack':
          return action === 'refund'
            ? refundApplePack(uow, transaction, row)
            : reverseAppleRefund(uow, transaction, row);
        case 'subscription':
          return applyAppleSubscriptionRead(uow, deps, { notification, read: prepared.read, inboxEventId: row.id });
        default:
          return ignored(
            'not_in_catalog',
            `product ${transaction.productId} is neither a catalog token pack nor a plan`,
          );
      }
    },
  });
}
