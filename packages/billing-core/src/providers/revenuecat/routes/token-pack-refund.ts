import type { Catalog } from '../../../catalog/catalog';
import { InvalidEventError } from '../../../errors';
import { lockWalletFunds } from '../../../holds/lock-wallet-funds';
import { processed, retryLater } from '../../../inbox/inbox-handler';
import { references } from '../../../references';
import { refundTokenPack } from '../../../refunds/refund-token-pack';
import { lockUser } from '../../../users/lock-user';
import { defineRoute } from '../../shared/create-provider-handler';
import { toStoreTransactionId } from '../claim-pack-transaction';
import type { RevenueCatEvent } from '../revenuecat-event';

/**
 * A refunded token pack: RevenueCat reports it as a CANCELLATION of the non-renewing product,
 * naming the purchase's store transaction. Takes back the tokens that purchase credited, once
 * (`revenuecat:refund:{transactionId}`), never below zero; the shortfall is recorded
 * (token_refunds) and shown in the outcome. The credit is found by its store transaction
 * (revenuecat_pack_transactions), on the wallet it landed on: the refund's body links no ids and
 * picks no wallet. A refund that arrives before its purchase was credited waits for it (retry
 * later, bounded by the maximum wait).
 */
export function createTokenPackRefundRoute(deps: { catalog: Catalog }) {
  return defineRoute<RevenueCatEvent, undefined>({
    async apply(uow, event, _prepared, row) {
      const { trx } = uow;
      const pack = deps.catalog.findTokenPackByRevenueCatProduct(event.product_id ?? '');
      if (!pack) throw new InvalidEventError(`product ${event.product_id ?? '(none)'} is not a catalog token pack`);
      const transactionId =
        toStoreTransactionId(event.transaction_id) ?? toStoreTransactionId(event.original_transaction_id);
      if (!transactionId) throw new InvalidEventError('token pack refund without transaction_id');

      // The credit this refund reverses: the one the store transaction was claimed for.
      const credit = await trx
        .selectFrom('revenuecat_pack_transactions as t')
        .innerJoin('ledger_entries as l', 'l.reference', 't.ledger_reference')
        .select(['t.user_id', 't.ledger_reference', 'l.amount'])
        .where('t.store_transaction_id', '=', transactionId)
        .executeTakeFirst();
      if (!credit) return retryLater(`the purchase of transaction ${transactionId} has not been credited yet`);
      await lockUser(trx, credit.user_id);
      // A hold that lapsed unsettled on a voided lot left tokens there that are not the user's: settle
      // lapsed holds first (their voided part taken, the rest settling older shortfalls), so the
      // take-back never takes them as the user's (docs/lots.md "Voids"). Locks the wallet, as the refund would.
      await lockWalletFunds(uow, credit.user_id);

      const result = await refundTokenPack(uow, {
        provider: 'revenuecat',
        providerRefundId: transactionId,
        // guard: revenuecat-refund-credited-user
        userId: credit.user_id,
        packId: pack.id,
        creditReference: credit.ledger_reference,
        tokensCredited: credit.amount,
        refundReference: references.revenuecatRefund(transactionId),
        inboxEventId: row.id,
      });
      const { tokens_taken: taken, tokens_credited: credited } = result.refund;
      if (result.kind === 'already-refunded') {
        return processed('already_refunded', `already refunded (${taken} of ${credited} tokens taken back)`);
      }
      return taken === credited
        ? processed('refunded', `took back ${taken} tokens (${pack.id})`)
        : processed(
            'partially_refunded',
            `took back ${taken} of ${credited} tokens (${pack.id}); shortfall ${credited - taken}: already spent`,
          );
    },
  });
}
