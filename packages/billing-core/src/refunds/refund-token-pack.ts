import type { Selectable, Transaction } from 'kysely';
import type { DB, Provider, TakeBackSource, TokenRefundsTable } from '../db/schema';
import { ensureWallet } from '../ledger/ensure-wallet';
import { readWalletFunds } from '../ledger/held-tokens';
import { postLedgerEntry } from '../ledger/post-ledger-entry';
import type { UnitOfWork } from '../unit-of-work/unit-of-work';
import { recordTakeBackShortfall } from './take-back-shortfalls';

export interface TokenPackRefund {
  provider: Provider;
  /** The provider's id for this refund; unique per provider (the fence). */
  providerRefundId: string;
  userId: string;
  packId: string;
  /** The ledger entry that credited the pack. */
  creditReference: string;
  tokensCredited: number;
  /** The ledger reference of the debit, from `references`. */
  refundReference: string;
  inboxEventId?: number | null;
  /** What the shortfall (then debt) is recorded as: the provider's take-back source (default RevenueCat's). */
  shortfallSource?: TakeBackSource;
}

export type RefundTokenPackResult =
  | { kind: 'refunded'; refund: Selectable<TokenRefundsTable> }
  | { kind: 'already-refunded'; refund: Selectable<TokenRefundsTable> };

/**
 * Takes a refunded pack's tokens back, inside the caller's transaction (which must hold the
 * user's lock). Takes what the wallet has available (its balance less what active holds reserve)
 * up to the credited amount, never below zero; the rest is the shortfall, recorded on the
 * token_refunds row for support and in take_back_shortfalls (a hold's end settles it).
 *
 * Idempotent: the unique (provider, provider_refund_id) row is written first, so a second run
 * (redelivery, replay, another replica) takes nothing and answers `already-refunded` even if the
 * balance changed in between; the debit's ledger reference is a second fence.
 */
export async function refundTokenPack(uow: UnitOfWork, refund: TokenPackRefund): Promise<RefundTokenPackResult> {
  const { trx } = uow;
  const existing = await findRefund(trx, refund);
  if (existing) return { kind: 'already-refunded', refund: existing };
  await ensureWallet(uow, refund.userId);
  // What active holds reserve is never taken (docs/holds.md), as in takeBackPaymentTokens: the
  // rest is the shortfall, settled first from what the hold frees when it ends.
  const funds = await readWalletFunds(trx, refund.userId, { lock: true });
  // guard: pack-refund-available
  const taken = Math.min(refund.tokensCredited, Math.max(0, funds.available));
  const inserted = await trx
    .insertInto('token_refunds')
    .values({
      provider: refund.provider,
      provider_refund_id: refund.providerRefundId,
      user_id: refund.userId,
      pack_id: refund.packId,
      credit_reference: refund.creditReference,
      tokens_credited: refund.tokensCredited,
      tokens_taken: taken,
      inbox_event_id: refund.inboxEventId ?? null,
    })
    .onConflict((oc) => oc.columns(['provider', 'provider_refund_id']).doNothing())
    .returningAll()
    .executeTakeFirst();
  if (!inserted) {
    const winner = await findRefund(trx, refund);
    if (!winner) throw new Error(`token refund ${refund.providerRefundId} conflicted but cannot be read`);
    return { kind: 'already-refunded', refund: winner };
  }
  if (taken > 0) {
    await postLedgerEntry(uow, {
      userId: refund.userId,
      reference: refund.refundReference,
      amount: -taken,
      reason: 'token_pack_refund',
      lots: { kind: 'take-back', fromLotOf: refund.creditReference },
      inboxEventId: refund.inboxEventId ?? null,
    });
  }
  await recordTakeBackShortfall(uow, {
    userId: refund.userId,
    source: refund.shortfallSource ?? 'revenuecat_refund',
    sourceId: String(inserted.id),
    takeBackReference: refund.refundReference,
    tokens: refund.tokensCredited - taken,
  });
  return { kind: 'refunded', refund: inserted };
}

function findRefund(trx: Transaction<DB>, refund: Pick<TokenPackRefund, 'provider' | 'providerRefundId'>) {
  return trx
    .selectFrom('token_refunds')
    .selectAll()
    .where('provider', '=', refund.provider)
    .where('provider_refund_id', '=', refund.providerRefundId)
    .executeTakeFirst();
}
