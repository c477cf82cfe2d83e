import type { Catalog } from '../../../catalog/catalog';
import { InvalidEventError } from '../../../errors';
import { fileEventUnderUser } from '../../../inbox/file-event-under-user';
import { ignored, processed, retryLater } from '../../../inbox/inbox-handler';
import type { AppleNotification } from '../../../provider-data/apple-signed-data';
import { paymentEnvironmentOf } from '../../../provider-data/payment-environment';
import { findUserByAppleAccountToken } from '../../../stores/store-accounts';
import { defineRoute } from '../../shared/create-provider-handler';
import { findApplePayment } from '../apple-payments';

/** Apple ignores consumption information sent later than this after its request. */
export const CONSUMPTION_ANSWER_WINDOW_MS = 12 * 3600_000;

/**
 * `CONSUMPTION_REQUEST` of a credited token pack: a customer asked Apple for a refund, and Apple
 * asks how much of it was consumed. Nothing is sent here (never a provider call inside the
 * transaction): a durable apple_consumption_requests row, one per notificationUUID, is written in
 * the event's transaction, and the worker's apple-consumption loop answers it after commit, only
 * with the user's recorded consent (docs/stores-apple.md). A request of a pack not credited yet
 * waits for its ONE_TIME_CHARGE; one of a transaction never credited (no token Tally gave) or of
 * another product is recorded and ignored.
 */
export function createConsumptionRequestRoute(deps: { catalog: Catalog }) {
  return defineRoute<AppleNotification, undefined>({
    runsAheadOfPostings: true,
    async apply(uow, notification, _prepared, row) {
      const { trx } = uow;
      const transaction = notification.transaction;
      if (!transaction) throw new InvalidEventError('CONSUMPTION_REQUEST without signedTransactionInfo');
      const { transactionId, productId } = transaction;
      if (!deps.catalog.findTokenPackByStoreProduct('appStore', productId)) {
        return ignored('not_a_token_pack', `product ${productId} is no catalog token pack: no consumption to report`);
      }
      const payment = await findApplePayment(trx, transactionId);
      if (!payment) {
        if ((await findUserByAppleAccountToken(trx, transaction.appAccountToken)) === null) {
          return ignored('unknown_account_token', `transaction ${transactionId} was never credited by Tally`);
        }
        return retryLater(`the purchase of App Store transaction ${transactionId} is not credited yet`);
      }
      const environment = paymentEnvironmentOf(row);
      if (environment === null) throw new InvalidEventError('an App Store notification without its environment');
      await fileEventUnderUser(trx, row.id, payment.user_id);
      const inserted = await trx
        .insertInto('apple_consumption_requests')
        .values({
          notification_uuid: notification.notificationUUID,
          transaction_id: transactionId,
          environment,
          payment_id: payment.id,
          user_id: payment.user_id,
          reason: notification.consumptionRequestReason,
          answer_by: new Date(notification.signedDate + CONSUMPTION_ANSWER_WINDOW_MS),
          inbox_event_id: row.id,
        })
        .onConflict((conflict) => conflict.column('notification_uuid').doNothing())
        .returning('id')
        .executeTakeFirst();
      return processed(
        'consumption_request_recorded',
        inserted
          ? `consumption request ${inserted.id} of transaction ${transactionId} queued; answered after commit only with the user's consent`
          : `the consumption request of notification ${notification.notificationUUID} was already recorded`,
      );
    },
  });
}
