import type { Transaction } from 'kysely';
import type { Catalog } from '../../../catalog/catalog';
import type { DB, InboxEventRow } from '../../../db/schema';
import { InvalidEventError, NotConfiguredError, PurchaseNotFoundError, RetryLaterError } from '../../../errors';
import { type HandlerContext, type HandlerResult, ignored, processed } from '../../../inbox/inbox-handler';
import { postLedgerEntry } from '../../../ledger/post-ledger-entry';
import type { ProviderPorts } from '../../../ports/provider-ports';
import { references } from '../../../references';
import { linkableIds, linkUserIds } from '../../../users/link-user-ids';
import { defineRoute } from '../../shared/create-provider-handler';
import type { RevenueCatEvent } from '../revenuecat-event';

/**
 * How long a token pack purchase RevenueCat does not list yet is retried, from the event's
 * received time: RevenueCat's REST read can lag its webhook. Then it parks `purchase_not_found`.
 */
export const PURCHASE_VERIFICATION_WINDOW_MS = 60 * 60_000;

/** What prepare found: the store transaction RevenueCat lists for the user, or nothing to verify. */
type Verification = { kind: 'verified'; transactionId: string } | { kind: 'not-a-pack' };

/**
 * NON_RENEWING_PURCHASE of a catalog token pack: credits the pack once, under
 * `revenuecat:event:{id}` (a redelivery or replay posts nothing), to the canonical user the
 * event's ids are linked to.
 *
 * With `verifyPurchases` (REVENUECAT_VERIFY_PURCHASES, on everywhere but the local demo), the
 * webhook body is a claim, not proof: RevenueCat's Authorization value is a static secret, so a
 * leaked one could mint tokens. prepare (outside any transaction) re-reads
 * `GET /v1/subscribers/{app_user_id}` and credits only when `non_subscriptions[product_id]` lists
 * a purchase whose `store_transaction_id` is the event's `transaction_id`. Not listed yet → retry
 * later; still not listed an hour after the event was received (the handler's clock) → parked
 * `purchase_not_found`. A read answered 201 (RevenueCat created the customer, so it had no
 * purchases) parks at once. One credit per store transaction (revenuecat_verified_purchases):
 * another event id naming a transaction already credited is ignored.
 */
export function createTokenPackPurchaseRoute(deps: {
  catalog: Catalog;
  ports: ProviderPorts;
  verifyPurchases: boolean;
}) {
  const packOf = (event: RevenueCatEvent) => deps.catalog.findTokenPackByRevenueCatProduct(event.product_id ?? '');
  const idsOf = (event: RevenueCatEvent) =>
    linkableIds([event.app_user_id, event.original_app_user_id, ...(event.aliases ?? [])]);

  async function credit(
    trx: Transaction<DB>,
    event: RevenueCatEvent,
    row: InboxEventRow,
    verification: Verification | undefined,
  ): Promise<HandlerResult> {
    const productId = event.product_id ?? '';
    const pack = packOf(event);
    if (!pack) return ignored('not_in_catalog', `product ${productId || '(none)'} is not a catalog token pack`);
    const ids = idsOf(event);
    if (ids.length === 0) throw new InvalidEventError('NON_RENEWING_PURCHASE without app_user_id');
    // A purchase under an anonymous id or an old alias credits the user the ids are linked to.
    const userId = await linkUserIds(trx, ids, { inboxEventId: row.id, withWallet: true });
    const reference = references.revenuecatEvent(event.id);
    if (verification?.kind === 'verified') {
      const claimed = await claimTransaction(trx, {
        transactionId: verification.transactionId,
        userId,
        productId,
        reference,
        inboxEventId: row.id,
      });
      if (claimed.inbox_event_id !== row.id) {
        return ignored(
          'transaction_already_credited',
          `store transaction ${verification.transactionId} was credited by inbox event ${claimed.inbox_event_id} (${claimed.ledger_reference})`,
        );
      }
    }
    const posted = await postLedgerEntry(trx, {
      userId,
      reference,
      amount: pack.tokens,
      reason: 'token_pack_purchase',
      inboxEventId: row.id,
    });
    const verified = verification?.kind === 'verified' ? ', listed by RevenueCat' : '';
    return posted.kind === 'posted'
      ? processed('credited', `credited ${pack.tokens} tokens (${pack.id}${verified})`)
      : processed('already_credited', `already credited (${posted.entry.reference})`);
  }

  if (!deps.verifyPurchases) {
    return defineRoute<RevenueCatEvent, undefined>({
      apply: (trx, event, _prepared, row) => credit(trx, event, row, undefined),
    });
  }

  return defineRoute<RevenueCatEvent, Verification>({
    async prepare(event, row, ctx) {
      if (!packOf(event)) return { kind: 'not-a-pack' };
      const readId = idsOf(event)[0];
      if (readId === undefined) throw new InvalidEventError('NON_RENEWING_PURCHASE without app_user_id');
      const transactionId = transactionIdOf(event.transaction_id);
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
      if (listed) return { kind: 'verified', transactionId };
      if (read.created) {
        throw new PurchaseNotFoundError(
          `RevenueCat did not know customer ${readId} (its read created it), so it has no purchase ${transactionId}`,
        );
      }
      return notListedYet(row, ctx, `RevenueCat lists no ${productId} purchase ${transactionId} for ${readId}`);
    },
    apply: (trx, event, verification, row) => credit(trx, event, row, verification),
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

/**
 * Claims the store transaction for this event (the first event wins), inside the crediting
 * transaction; returns the row that holds it (this event's, or the one that credited it first).
 */
async function claimTransaction(
  trx: Transaction<DB>,
  claim: { transactionId: string; userId: string; productId: string; reference: string; inboxEventId: number },
) {
  const inserted = await trx
    .insertInto('revenuecat_verified_purchases')
    .values({
      store_transaction_id: claim.transactionId,
      user_id: claim.userId,
      product_id: claim.productId,
      ledger_reference: claim.reference,
      inbox_event_id: claim.inboxEventId,
    })
    .onConflict((oc) => oc.column('store_transaction_id').doNothing())
    .returningAll()
    .executeTakeFirst();
  if (inserted) return inserted;
  return trx
    .selectFrom('revenuecat_verified_purchases')
    .selectAll()
    .where('store_transaction_id', '=', claim.transactionId)
    .executeTakeFirstOrThrow();
}

function transactionIdOf(value: unknown): string | null {
  if (typeof value === 'string' && value.length > 0 && value.length <= 255) return value;
  if (typeof value === 'number' && Number.isSafeInteger(value)) return String(value);
  return null;
}
