import { sql } from 'kysely';
import type { TakeBackSource } from '../db/schema';
import { settleSource, writeDebtChanged } from '../ledger/debt';
import { readWalletFunds } from '../ledger/held-tokens';
import { postLedgerEntry } from '../ledger/post-ledger-entry';
import { references } from '../references';
import type { UnitOfWork } from '../unit-of-work/unit-of-work';

/**
 * Records what a take-back (refund, chargeback) could not take, inside its transaction and after
 * its own debit, with the user's latest ledger entry as the marker of when it ran. The caller
 * holds the user's wallet lock (the take-back locked it), so no entry slips in between.
 */
export async function recordTakeBackShortfall(
  uow: UnitOfWork,
  shortfall: { userId: string; source: TakeBackSource; sourceId: string; takeBackReference: string; tokens: number },
): Promise<void> {
  if (shortfall.tokens <= 0) return;
  const { trx } = uow;
  const latest = await trx
    .selectFrom('ledger_entries')
    .select(sql<string | null>`max(id)`.as('id'))
    .where('user_id', '=', shortfall.userId)
    .executeTakeFirstOrThrow();
  await trx
    .insertInto('take_back_shortfalls')
    .values({
      user_id: shortfall.userId,
      source: shortfall.source,
      source_id: shortfall.sourceId,
      take_back_reference: shortfall.takeBackReference,
      shortfall: shortfall.tokens,
      last_ledger_entry_id: Number(latest.id ?? 0),
    })
    .execute();
  // guard: debt-changed-recorded
  await writeDebtChanged(uow, {
    userId: shortfall.userId,
    change: shortfall.tokens,
    reason: shortfall.source,
    reference: shortfall.takeBackReference,
  });
}

/**
 * A reinstated chargeback (or a reversed App Store refund, `reason` refund_reversed) forgives `tokens` of its open shortfall (reinstate: the part its
 * payment's refunds do not take back). The rest stays open (the refunds still owe it, and a
 * failed generation in flight at the withdrawal may still settle it); once nothing is left open
 * the rows are closed. Runs under the payment's lock.
 */
export async function releaseTakeBackShortfall(
  uow: UnitOfWork,
  source: { source: TakeBackSource; sourceId: string; reference: string; reason?: string },
  tokens: number,
): Promise<void> {
  const { trx } = uow;
  const open = await trx
    .selectFrom('take_back_shortfalls')
    .select(['id', 'user_id', 'shortfall', 'recovered', 'forgiven'])
    .where('source', '=', source.source)
    .where('source_id', '=', source.sourceId)
    .where('closed_at', 'is', null)
    .orderBy('id')
    .forUpdate()
    .execute();
  let remaining = tokens;
  for (const row of open) {
    const left = row.shortfall - row.recovered - row.forgiven;
    const released = Math.min(remaining, left);
    remaining -= released;
    await trx
      .updateTable('take_back_shortfalls')
      .set(released >= left ? { closed_at: sql`now()` } : { shortfall: sql`shortfall - ${released}` })
      .where('id', '=', row.id)
      .execute();
  }
  const userId = open[0]?.user_id;
  if (userId !== undefined) {
    await writeDebtChanged(uow, {
      userId,
      change: -(tokens - remaining),
      reason: source.reason ?? 'dispute_reinstated',
      reference: source.reference,
    });
  }
}

/**
 * A failed generation's refund gives back tokens its debit took. If a take-back ran while that
 * debit was in flight (its marker is at or after the debit's entry), those tokens are exactly
 * what the take-back could not take: they settle its shortfall first, under
 * `studio:{requestId}:refund:recovered`, instead of landing in the wallet of a user who no
 * longer paid for them. The take-back's own records move with it (the payment's
 * `tokens_refunded`/`refund_shortfall`, the dispute's `tokens_taken`, the token refund's
 * `tokens_taken`), so a reinstatement still gives back exactly what was taken.
 *
 * Runs in the refund's transaction, right after the refund credit (the wallet is locked and holds
 * at least `refundedTokens` more than before, so this never goes below zero). Idempotent with the
 * refund: it runs only when the refund was posted. Returns the tokens recovered.
 */
export async function recoverShortfallsFromStudioRefund(
  uow: UnitOfWork,
  refund: { userId: string; requestPublicId: string; debitEntryId: number; refundedTokens: number },
): Promise<number> {
  return recoverShortfalls(uow, {
    userId: refund.userId,
    sinceEntryId: refund.debitEntryId,
    tokens: refund.refundedTokens,
    reference: references.studioRefundRecovered(refund.requestPublicId),
  });
}

/**
 * What a hold frees when it ends (released, captured for less, or expired) are tokens no
 * take-back could take while it was active (docs/holds.md "The shortfall rule"): if a take-back
 * ran while the hold was active (its marker is at or after the hold's `ledger_marker`), they
 * settle its open shortfall first, under `hold:{id}:release:recovered` (only a shortfall recorded
 * before the hold's expires_at: a later take-back saw the tokens free). At most `freedTokens`
 * and at most what the wallet has available. The caller holds the wallet lock and has already
 * ended the hold (its tokens are no longer held). Once per hold: a hold ends once, and the
 * reference is unique. Returns the tokens recovered.
 */
export async function recoverShortfallsFromHold(
  uow: UnitOfWork,
  hold: { userId: string; holdId: string; ledgerMarker: number; expiresAt: Date; freedTokens: number },
): Promise<number> {
  if (hold.freedTokens <= 0) return 0;
  return recoverShortfalls(uow, {
    userId: hold.userId,
    sinceEntryId: hold.ledgerMarker,
    // A take-back after the hold lapsed (but before it was settled) saw its tokens free and took
    // them itself: its shortfall is not this hold's to settle. A take-back decides what is held by
    // its transaction's now(), which is also its shortfall's created_at.
    recordedBefore: hold.expiresAt,
    tokens: hold.freedTokens,
    // Read only when there is a shortfall to settle (the common case has none).
    capTokens: async () => Math.max(0, (await readWalletFunds(uow.trx, hold.userId, { lock: false })).available),
    reference: references.holdReleaseRecovered(hold.holdId),
  });
}

/**
 * Settles, with `tokens` that have just come back to the wallet, the user's open shortfalls of
 * take-backs that ran at or after `sinceEntryId` (their marker) and, with `recordedBefore`,
 * before that time, oldest first, under one debit
 * `reference` (a take-back of the unheld lots). The take-back's own records move with it (the
 * payment's `tokens_refunded`/`refund_shortfall`, the dispute's `tokens_taken`, the token
 * refund's `tokens_taken`). Returns the tokens recovered.
 */
async function recoverShortfalls(
  uow: UnitOfWork,
  recovery: {
    userId: string;
    sinceEntryId: number;
    recordedBefore?: Date;
    tokens: number;
    /** At most this many (asked only when a shortfall is open). */
    capTokens?: () => Promise<number>;
    reference: string;
  },
): Promise<number> {
  const { trx } = uow;
  if (recovery.tokens <= 0) return 0;
  let query = trx
    .selectFrom('take_back_shortfalls')
    .selectAll()
    .where('user_id', '=', recovery.userId)
    .where('closed_at', 'is', null)
    .where('last_ledger_entry_id', '>=', recovery.sinceEntryId)
    .where(sql<boolean>`recovered + forgiven < shortfall`);
  // guard: shortfall-recorded-before
  if (recovery.recordedBefore) query = query.where('created_at', '<', recovery.recordedBefore);
  const open = await query.orderBy('id').forUpdate().execute();
  if (open.length === 0) return 0;
  let remaining = recovery.capTokens ? Math.min(recovery.tokens, await recovery.capTokens()) : recovery.tokens;
  let recovered = 0;
  for (const row of open) {
    if (remaining <= 0) break;
    const tokens = Math.min(remaining, row.shortfall - row.recovered - row.forgiven);
    remaining -= tokens;
    recovered += tokens;
    await trx
      .updateTable('take_back_shortfalls')
      .set({ recovered: sql`recovered + ${tokens}` })
      .where('id', '=', row.id)
      .execute();
    await settleSource(trx, row.source, row.source_id, tokens);
  }
  if (recovered > 0) {
    await postLedgerEntry(uow, {
      userId: recovery.userId,
      reference: recovery.reference,
      amount: -recovered,
      reason: 'take_back_recovered',
      lots: { kind: 'take-back' },
    });
    await writeDebtChanged(uow, {
      userId: recovery.userId,
      change: -recovered,
      reason: 'take_back_recovered',
      reference: recovery.reference,
    });
  }
  return recovered;
}
