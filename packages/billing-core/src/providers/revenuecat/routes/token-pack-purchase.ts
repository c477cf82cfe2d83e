import type { Catalog } from '../../../catalog/catalog';
import { InvalidEventError } from '../../../errors';
import { ignored, processed } from '../../../inbox/inbox-handler';
import { postLedgerEntry } from '../../../ledger/post-ledger-entry';
import { references } from '../../../references';
import { linkableIds, linkUserIds } from '../../../users/link-user-ids';
import { defineRoute } from '../../shared/create-provider-handler';
import type { RevenueCatEvent } from '../revenuecat-event';

/**
 * NON_RENEWING_PURCHASE of a catalog token pack: credits the pack once, under
 * `revenuecat:event:{id}` (a redelivery or replay posts nothing), to the canonical user the
 * event's ids are linked to.
 */
export function createTokenPackPurchaseRoute(deps: { catalog: Catalog }) {
  return defineRoute<RevenueCatEvent, undefined>({
    async apply(trx, event, _prepared, row) {
      const productId = event.product_id ?? '';
      const pack = deps.catalog.findTokenPackByRevenueCatProduct(productId);
      if (!pack) return ignored('not_in_catalog', `product ${productId || '(none)'} is not a catalog token pack`);
      const ids = linkableIds([event.app_user_id, event.original_app_user_id, ...(event.aliases ?? [])]);
      if (ids.length === 0) throw new InvalidEventError('NON_RENEWING_PURCHASE without app_user_id');
      // A purchase under an anonymous id or an old alias credits the user the ids are linked to.
      const userId = await linkUserIds(trx, ids, { inboxEventId: row.id });
      const posted = await postLedgerEntry(trx, {
        userId,
        reference: references.revenuecatEvent(event.id),
        amount: pack.tokens,
        reason: 'token_pack_purchase',
        inboxEventId: row.id,
      });
      return posted.kind === 'posted'
        ? processed('credited', `credited ${pack.tokens} tokens (${pack.id})`)
        : processed('already_credited', `already credited (${posted.entry.reference})`);
    },
  });
}
