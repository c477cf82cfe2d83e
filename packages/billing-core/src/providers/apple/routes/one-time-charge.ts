import type { Catalog } from '../../../catalog/catalog';
import { InvalidEventError } from '../../../errors';
import { fileEventUnderUser } from '../../../inbox/file-event-under-user';
import { ignored, postThen, processed } from '../../../inbox/inbox-handler';
import type { AppleNotification } from '../../../provider-data/apple-signed-data';
import { references } from '../../../references';
import { findUserByAppleAccountToken } from '../../../stores/store-accounts';
import { defineRoute } from '../../shared/create-provider-handler';
import { appleAmountMinorOf, claimApplePayment } from '../apple-payments';

/**
 * `ONE_TIME_CHARGE` of a token pack (`tokenPacks[].appStoreProducts`): credits the pack (times the
 * transaction's quantity) once per App Store transaction, under `apple:transaction:{id}`, as a
 * purchased lot that never expires, to the user whose `appAccountToken` it carries. The payment
 * row (provider 'apple') is the fence: a second notification of the transaction (another
 * notificationUUID) finds the first one's row and credits nothing; a redelivery is the same inbox
 * row. A token Tally never gave, or none, moves nothing (`unknown_account_token`).
 */
export function createOneTimeChargeRoute(deps: { catalog: Catalog }) {
  return defineRoute<AppleNotification, undefined>({
    // Reads the store account and its own fence (payments), and hands its credit over.
    runsAheadOfPostings: true,
    async apply(uow, notification, _prepared, row) {
      const transaction = notification.transaction;
      if (!transaction) throw new InvalidEventError('ONE_TIME_CHARGE without signedTransactionInfo');
      const { transactionId, productId } = transaction;
      const pack = deps.catalog.findTokenPackByStoreProduct('appStore', productId);
      if (!pack) return ignored('not_in_catalog', `product ${productId} is not a catalog token pack`);
      const userId = await findUserByAppleAccountToken(uow.trx, transaction.appAccountToken);
      if (userId === null) {
        return ignored(
          'unknown_account_token',
          `transaction ${transactionId} carries ${transaction.appAccountToken ? 'an appAccountToken Tally never gave' : 'no appAccountToken'}; nothing credited`,
        );
      }
      // Apple names no Tally user: the support view finds the event under the one its token named.
      // guard: apple-event-filed-under-user
      await fileEventUnderUser(uow.trx, row.id, userId);
      const quantity = transaction.quantity ?? 1;
      const reference = references.appleTransaction(transactionId);
      const holder = await claimApplePayment(uow.trx, {
        transactionId,
        userId,
        packId: pack.id,
        tokens: pack.tokens * quantity,
        amountMinor: appleAmountMinorOf(transaction.price, transaction.currency),
        currency: (transaction.currency ?? 'xxx').toLowerCase(),
        reference,
        inboxEventId: row.id,
      });
      // guard: apple-transaction-claimed-once
      if (holder.inbox_event_id !== row.id) {
        return ignored(
          'transaction_already_credited',
          `App Store transaction ${transactionId} was credited by inbox event ${holder.inbox_event_id} (${holder.ledger_reference})`,
        );
      }
      const what = `${holder.tokens_granted} tokens (${pack.id}${quantity > 1 ? ` × ${quantity}` : ''})`;
      return postThen(
        {
          userId: holder.user_id,
          reference: holder.ledger_reference,
          amount: holder.tokens_granted,
          reason: 'token_pack_purchase',
          lots: { kind: 'credit', category: 'purchased', expiresAt: null },
          inboxEventId: row.id,
          settlesDebt: true,
        },
        (posted) =>
          posted.kind === 'posted'
            ? processed('credited', `credited ${what} for App Store transaction ${transactionId}`)
            : processed('already_credited', `already credited (${posted.entry.reference})`),
      );
    },
  });
}
