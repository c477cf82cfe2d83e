import { ignored, processed } from '../../../inbox/inbox-handler';
import { defineRoute } from '../../shared/create-provider-handler';
import type { GooglePlayEvent } from '../google-play-notification';
import { dateOfMillis } from '../google-play-orders';
import { type TakeBackVoidedResult, takeBackVoidedPurchase } from '../take-back-voided-purchase';

/** productType 1: a subscription's purchase (its state is re-read by the subscription route). */
const SUBSCRIPTION_PRODUCT = 1;

/**
 * voidedPurchaseNotification of a one-time product: takes the pack back from its lot (then
 * debt), once per order (takeBackVoidedPurchase). A void of an order Tally never credited is
 * recorded (a late PURCHASED then credits nothing). The notification carries everything the
 * take-back needs: no provider read, and no environment (the credit already applied its own).
 */
export function createVoidedPurchaseRoute() {
  return defineRoute<GooglePlayEvent, undefined>({
    environmentCheck: 'none',
    async apply(uow, event, _prepared, row) {
      const voided = event.notification.voidedPurchaseNotification;
      if (!voided) return ignored('unhandled_type', 'VOIDED_PURCHASE without voidedPurchaseNotification');
      if (voided.productType === SUBSCRIPTION_PRODUCT) {
        return ignored(
          'not_a_token_pack',
          `order ${voided.orderId} is a subscription's: its state is read from subscriptionsv2`,
        );
      }
      const result = await takeBackVoidedPurchase(uow, {
        orderId: voided.orderId,
        purchaseToken: voided.purchaseToken,
        seenBy: 'notification',
        voidedAt: dateOfMillis(event.notification.eventTimeMillis),
        inboxEventId: row.id,
      });
      return voidOutcome(voided.orderId, result);
    },
  });
}

/** What a take-back came to, as the event's outcome. */
export function voidOutcome(orderId: string, result: TakeBackVoidedResult) {
  if (result.kind === 'not-credited') {
    return ignored('nothing_refunded', `order ${orderId} was never credited; the void is recorded so it never will be`);
  }
  const { tokens_taken: taken, tokens_credited: credited } = result.refund;
  if (result.kind === 'already-refunded') {
    return processed('already_refunded', `already taken back (${taken} of ${credited} tokens, order ${orderId})`);
  }
  return taken === credited
    ? processed('refunded', `took back ${taken} tokens (${result.packId}, order ${orderId})`)
    : processed(
        'partially_refunded',
        `took back ${taken} of ${credited} tokens (${result.packId}, order ${orderId}); shortfall ${credited - taken} owed as debt`,
      );
}
