import { sql } from 'kysely';
import type { Catalog } from '../../../catalog/catalog';
import { InvalidEventError } from '../../../errors';
import { processed, retryLater } from '../../../inbox/inbox-handler';
import { references } from '../../../references';
import { refundTokenPack } from '../../../refunds/refund-token-pack';
import { linkableIds, linkUserIds } from '../../../users/link-user-ids';
import { lockUser } from '../../../users/lock-user';
import { defineRoute } from '../../shared/create-provider-handler';
import type { RevenueCatEvent } from '../revenuecat-event';

/**
 * A refunded token pack: RevenueCat reports it as a CANCELLATION of the non-renewing product,
 * naming the purchase's store transaction. Takes back the tokens that purchase credited, once
 * (`revenuecat:refund:{transactionId}`), never below zero; the shortfall is recorded
 * (token_refunds) and shown in the outcome. A refund that arrives before its purchase was
 * credited waits for it (retry later, bounded by the maximum wait).
 */
export function createTokenPackRefundRoute(deps: { catalog: Catalog }) {
  return defineRoute<RevenueCatEvent, undefined>({
    async apply(trx, event, _prepared, row) {
      const pack = deps.catalog.findTokenPackByRevenueCatProduct(event.product_id ?? '');
      if (!pack) throw new InvalidEventError(`product ${event.product_id ?? '(none)'} is not a catalog token pack`);
      const transactionId = stringOf(event.transaction_id) ?? stringOf(event.original_transaction_id);
      if (!transactionId) throw new InvalidEventError('token pack refund without transaction_id');
      const ids = linkableIds([event.app_user_id, event.original_app_user_id, ...(event.aliases ?? [])]);
      if (ids.length === 0) throw new InvalidEventError('token pack refund without app_user_id');
      const userId = await linkUserIds(trx, ids, { inboxEventId: row.id });
      await lockUser(trx, userId);

      // The credit this refund reverses: the user's token-pack purchase with the same store
      // transaction. The text search narrows the user's purchases; the body is then parsed here,
      // not cast to jsonb in SQL, where one deeply nested body would fail every refund of the user.
      const candidates = await sql<{ reference: string; amount: number; raw_body: string }>`
        SELECT l.reference, l.amount, i.raw_body
          FROM ledger_entries l
          JOIN inbox_events i ON i.id = l.inbox_event_id
         WHERE l.user_id = ${userId}
           AND l.reason = 'token_pack_purchase'
           AND i.provider = 'revenuecat'
           AND strpos(i.raw_body, ${transactionId}) > 0
         ORDER BY l.id`.execute(trx);
      const credit = {
        rows: candidates.rows.filter((candidate) => transactionOf(candidate.raw_body) === transactionId),
      };
      const entry = credit.rows[0];
      if (!entry) return retryLater(`the purchase of transaction ${transactionId} has not been credited yet`);

      const result = await refundTokenPack(trx, {
        provider: 'revenuecat',
        providerRefundId: transactionId,
        userId,
        packId: pack.id,
        creditReference: entry.reference,
        tokensCredited: entry.amount,
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
            'refunded_partially',
            `took back ${taken} of ${credited} tokens (${pack.id}); shortfall ${credited - taken}: already spent`,
          );
    },
  });
}

/** The store transaction a stored RevenueCat body names, or null when it cannot be read. */
function transactionOf(rawBody: string): string | null {
  try {
    const body = JSON.parse(rawBody) as { event?: { transaction_id?: unknown } };
    return stringOf(body.event?.transaction_id);
  } catch {
    return null;
  }
}

function stringOf(value: unknown): string | null {
  if (typeof value === 'string' && value.length > 0 && value.length <= 255) return value;
  if (typeof value === 'number' && Number.isFinite(value)) return String(value);
  return null;
}
