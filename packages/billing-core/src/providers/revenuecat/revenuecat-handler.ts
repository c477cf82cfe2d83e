import { InvalidEventError } from '../../errors';
import type { HandlerResult, InboxHandler } from '../../inbox/inbox-handler';
import { postLedgerEntry } from '../../ledger/post-ledger-entry';
import { references } from '../../references';
import { parseRevenueCatWebhook, type RevenueCatEvent, revenueCatUserOf } from './revenuecat-event';

/**
 * Subscription event types. They are notifications that the subscriber changed; the truth is
 * re-read from RevenueCat's REST API (see product.md). That sync is not built yet, so these
 * events are kept and marked ignored with a note; a replay processes them once it lands.
 */
const subscriptionEventTypes = new Set([
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
]);

export const revenueCatHandler: InboxHandler<RevenueCatEvent> = {
  async prepare(row) {
    return parseRevenueCatWebhook(row.raw_body);
  },

  async apply(trx, row, event, ctx): Promise<HandlerResult> {
    if (event.type === 'NON_RENEWING_PURCHASE') {
      const productId = event.product_id ?? '';
      const pack = ctx.catalog.findTokenPackByRevenueCatProduct(productId);
      if (!pack) return { kind: 'ignored', outcome: `product ${productId || '(none)'} is not a catalog token pack` };
      const userId = revenueCatUserOf(event);
      if (!userId) throw new InvalidEventError('NON_RENEWING_PURCHASE without app_user_id');
      const posted = await postLedgerEntry(trx, {
        userId,
        reference: references.revenuecatEvent(event.id),
        amount: pack.tokens,
        reason: 'token_pack_purchase',
        inboxEventId: row.id,
      });
      return {
        kind: 'processed',
        outcome:
          posted.kind === 'posted'
            ? `credited ${pack.tokens} tokens (${pack.id})`
            : `already credited (${posted.entry.reference})`,
      };
    }
    if (event.type === 'TEST') return { kind: 'ignored', outcome: 'test event' };
    if (subscriptionEventTypes.has(event.type)) {
      return { kind: 'ignored', outcome: 'subscription sync not built yet; replay once it is' };
    }
    return { kind: 'ignored', outcome: `event type ${event.type} is not handled` };
  },
};
