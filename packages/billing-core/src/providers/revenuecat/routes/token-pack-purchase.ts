import type { Catalog } from '../../../catalog/catalog';
import type { InboxEventRow } from '../../../db/schema';
import { InvalidEventError, NotConfiguredError, PurchaseNotFoundError, RetryLaterError } from '../../../errors';
import { type HandlerContext, type HandlerResult, ignored, postThen, processed } from '../../../inbox/inbox-handler';
import type { ProviderPorts } from '../../../ports/provider-ports';
import { references } from '../../../references';
import type { UnitOfWork } from '../../../unit-of-work/unit-of-work';
import { linkableIds, revenueCatConfirmedIds } from '../../../users/link-user-ids';
import { defineRoute } from '../../shared/create-provider-handler';
import { linkUserIdsAndClaimPack, toStoreTransactionId } from '../claim-pack-transaction';
import type { RevenueCatEvent } from '../revenuecat-event';

/**
 * How long a token pack purchase RevenueCat does not list yet is retried, from the event's
 * received time: RevenueCat's REST read can lag its webhook. Then it parks `purchase_not_found`.
 */
export const PURCHASE_VERIFICATION_WINDOW_MS = 60 * 60_000;

/**
 * What prepare found: the store transaction RevenueCat lists for the user, with the ids its read
 * confirms (the only ids linked), or nothing to verify.
 */
type Verification = { kind: 'verified'; transactionId: string; confirmedIds: string[] } | { kind: 'not-a-pack' };

/**
 * NON_RENEWING_PURCHASE of a catalog token pack: credits it once per store transaction (fenced by
 * revenuecat_pack_transactions), under `revenuecat:event:{id}`, to the canonical user. With
 * `verifyPurchases` the body is only a claim: prepare re-reads the subscriber and credits only a
 * purchase it lists (retry later, then `purchase_not_found`), linking only the ids that read
 * confirms; without it the body decides but links nothing (docs/revenuecat.md, token packs).
 */
export function createTokenPackPurchaseRoute(deps: {
  catalog: Catalog;
  ports: ProviderPorts;
  verifyPurchases: boolean;
}) {
  const packOf = (event: RevenueCatEvent) => deps.catalog.findTokenPackByRevenueCatProduct(event.product_id ?? '');
  /** The id the event names its customer by: `app_user_id` (else the first other id it names). */
  const readIdOf = (event: RevenueCatEvent) =>
    linkableIds([event.app_user_id, event.original_app_user_id, ...(event.aliases ?? [])])[0];

  async function credit(
    uow: UnitOfWork,
    event: RevenueCatEvent,
    row: InboxEventRow,
    verification: Verification | undefined,
  ): Promise<HandlerResult> {
    const productId = event.product_id ?? '';
    const pack = packOf(event);
    if (!pack) return ignored('not_in_catalog', `product ${productId || '(none)'} is not a catalog token pack`);
    const verified = verification?.kind === 'verified' ? verification : undefined;
    // Linked: the ids RevenueCat's read confirmed; unverified (the demo), the body's id alone,
    // which still reaches the user a confirmed link made before points it at.
    const readId = readIdOf(event);
    // guard: revenuecat-pack-confirmed-ids
    const ids = verified ? verified.confirmedIds : readId === undefined ? [] : [readId];
    if (ids.length === 0) throw new InvalidEventError('NON_RENEWING_PURCHASE without app_user_id');
    const transactionId = verified?.transactionId ?? toStoreTransactionId(event.transaction_id);
    if (transactionId === null) throw new InvalidEventError('NON_RENEWING_PURCHASE without transaction_id');
    const reference = references.revenuecatEvent(event.id);
    // A purchase under an anonymous id or an old alias credits the user the ids are linked to;
    // the store transaction is claimed for that user (one statement when the ids are all linked).
    const { userId, holder: claimed } = await linkUserIdsAndClaimPack(uow, ids, {
      transactionId,
      productId,
      reference,
      inboxEventId: row.id,
      verified: verified !== undefined,
    });
    // guard: revenuecat-transaction-claim
    if (claimed.inbox_event_id !== row.id) {
      return ignored(
        'transaction_already_credited',
        `store transaction ${transactionId} was credited by inbox event ${claimed.inbox_event_id} (${claimed.ledger_reference})`,
      );
    }
    // The credit is handed to the engine, which posts a batch's credits together.
    const listed = verified ? ', listed by RevenueCat' : '';
    return postThen(
      {
        userId,
        reference,
        amount: pack.tokens,
        reason: 'token_pack_purchase',
        lots: { kind: 'credit', category: 'purchased', expiresAt: null },
        inboxEventId: row.id,
        settlesDebt: true,
      },
      (posted) =>
        posted.kind === 'posted'
          ? processed('credited', `credited ${pack.tokens} tokens (${pack.id}${listed})`)
          : processed('already_credited', `already credited (${posted.entry.reference})`),
    );
  }

  if (!deps.verifyPurchases) {
    return defineRoute<RevenueCatEvent, undefined>({
      // Reads only its ids' links and its claim, and hands its credit over.
      runsAheadOfPostings: true,
      apply: (uow, event, _prepared, row) => credit(uow, event, row, undefined),
    });
  }

  return defineRoute<RevenueCatEvent, Verification>({
    runsAheadOfPostings: true,
    async prepare(event, row, ctx) {
      if (!packOf(event)) return { kind: 'not-a-pack' };
      const readId = readIdOf(event);
      if (readId === undefined) throw new InvalidEventError('NON_RENEWING_PURCHASE without app_user_id');
      const transactionId = toStoreTransactionId(event.transaction_id);
      if (transactionId === null) {
        throw new InvalidEventError('NON_RENEWING_PURCHASE without transaction_id cannot be verified');
      }
      const api = deps.ports.revenueCat;
      if (!api)
        throw new NotConfiguredError('RevenueCat API (REVENUECAT_API_KEY), which verifies token pack purchases');
      const read = await api.getSubscriber(readId);
      const productId = event.product_id ?? '';
      const listed = (read.subscriber.non_subscriptions?.[productId] ?? []).some(
        (purchase) => purchase.store_transaction_id === transactionId,
      );
      // guard: revenuecat-pack-listed
      if (listed) {
        return { kind: 'verified', transactionId, confirmedIds: revenueCatConfirmedIds(readId, read.subscriber) };
      }
      if (read.created) {
        throw new PurchaseNotFoundError(
          `RevenueCat did not know customer ${readId} (its read created it), so it has no purchase ${transactionId}`,
        );
      }
      return notListedYet(row, ctx, `RevenueCat lists no ${productId} purchase ${transactionId} for ${readId}`);
    },
    apply: (uow, event, verification, row) => credit(uow, event, row, verification),
  });
}

/** Retry later while the event is younger than the window, then park. */
function notListedYet(row: InboxEventRow, ctx: HandlerContext, what: string): never {
  const waitedMs = ctx.clock.now().getTime() - row.received_at.getTime();
  if (waitedMs >= PURCHASE_VERIFICATION_WINDOW_MS) {
    throw new PurchaseNotFoundError(`${what} ${Math.floor(waitedMs / 60_000)} minutes after the event arrived`);
  }
  throw new RetryLaterError(`${what} yet`);
}
