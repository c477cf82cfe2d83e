import { sql } from 'kysely';
import type { GooglePlayVoidSeenBy } from '../../db/schema';
import { lockWalletFunds } from '../../holds/lock-wallet-funds';
import { fileEventUnderUser } from '../../inbox/file-event-under-user';
import { references } from '../../references';
import { type RefundTokenPackResult, refundTokenPack } from '../../refunds/refund-token-pack';
import type { UnitOfWork } from '../../unit-of-work/unit-of-work';
import { lockUser } from '../../users/lock-user';
import { findGooglePlayPurchase, lockGooglePlayOrder, recordGooglePlayVoid } from './google-play-orders';

export interface GooglePlayVoid {
  orderId: string;
  purchaseToken: string;
  seenBy: GooglePlayVoidSeenBy;
  voidedAt: Date | null;
  inboxEventId: number | null;
}

export type TakeBackVoidedResult =
  /** Tally never credited the order: the void is recorded, so a later PURCHASED never credits it. */
  { kind: 'not-credited' } | (RefundTokenPackResult & { packId: string });

/**
 * A voided Google Play purchase (refunded, charged back or revoked), from its notification or
 * the daily pass: records the void once per order, then takes the pack back from the lot its
 * credit made, never below zero; what was already spent becomes debt (shortfall source
 * `google_voided`). Once per order: token_refunds' (google_play, orderId) row is the fence, so
 * the notification and the pass, in either order or together, take it back once. Holds the
 * order's lock (the credit takes it too) and the user's lock, inside the caller's unit of work.
 */
export async function takeBackVoidedPurchase(uow: UnitOfWork, voided: GooglePlayVoid): Promise<TakeBackVoidedResult> {
  const { trx } = uow;
  await lockGooglePlayOrder(trx, voided.orderId);
  await recordGooglePlayVoid(trx, voided);
  const purchase = await findGooglePlayPurchase(trx, voided.orderId);
  if (!purchase) return { kind: 'not-credited' };
  if (voided.inboxEventId !== null) await fileEventUnderUser(trx, voided.inboxEventId, purchase.user_id);
  await lockUser(trx, purchase.user_id);
  // Lapsed holds settled first, so their voided part is not taken as the user's (refunds do the same).
  await lockWalletFunds(uow, purchase.user_id);
  // guard: google-void-once
  const result = await refundTokenPack(uow, {
    provider: 'google_play',
    providerRefundId: voided.orderId,
    userId: purchase.user_id,
    packId: purchase.pack_id,
    creditReference: purchase.ledger_reference,
    tokensCredited: purchase.tokens,
    refundReference: references.googleVoided(voided.orderId),
    inboxEventId: voided.inboxEventId,
    shortfallSource: 'google_voided',
  });
  // A voided purchase needs no consume: there is no automatic refund left to prevent.
  await trx
    .updateTable('google_play_purchases')
    .set({ consume_status: 'voided', consume_locked_until: null, updated_at: sql`now()` })
    .where('order_id', '=', voided.orderId)
    .where('consume_status', '=', 'pending')
    .execute();
  return { ...result, packId: purchase.pack_id };
}
