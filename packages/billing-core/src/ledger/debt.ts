import { type Kysely, sql, type Transaction } from 'kysely';
import type { DB, TakeBackSource } from '../db/schema';
import { references } from '../references';
import type { UnitOfWork } from '../unit-of-work/unit-of-work';
import type { LedgerPosting } from './ledger-posting';
import { applyLotMovement } from './lots';
import { lockWalletAndInsert } from './posting-statement';

/**
 * Writes `wallet.debt_changed` for a change of the user's debt just made in this unit (the rows'
 * trigger has moved `wallets.debt`): the debt after it, the change, why and the reference behind
 * it. Locks the wallet row as every message writer does (per-user message order); the unit hands
 * the message off after its commit. Every writer of debt calls it: recordTakeBackShortfall,
 * releaseTakeBackShortfall, the recoveries, settleDebtFromCredit, forgiveDebt.
 */
export async function writeDebtChanged(
  uow: UnitOfWork,
  change: { userId: string; change: number; reason: string; reference: string | null },
): Promise<void> {
  if (change.change === 0) return;
  const written = await sql<{ id: number }>`
    WITH wallet AS (SELECT user_id, debt FROM wallets WHERE user_id = ${change.userId} FOR UPDATE)
    INSERT INTO app_webhook_messages (user_id, type, data, enqueued_at)
    SELECT user_id, 'wallet.debt_changed',
           jsonb_build_object('userId', user_id, 'debt', debt, 'change', ${change.change}::bigint,
                              'reason', ${change.reason}::text, 'reference', ${change.reference}::text),
           CASE WHEN ${uow.outbox.handsOff}::boolean THEN now() END
      FROM wallet
    RETURNING id`.execute(uow.trx);
  uow.outbox.written(written.rows.map((row) => Number(row.id)));
}

/** The wallet's open debt (0 for a user never seen): what take-backs and priced captures could not take. */
export async function readDebt(db: Kysely<DB>, userId: string): Promise<number> {
  const row = await db.selectFrom('wallets').select('debt').where('user_id', '=', userId).executeTakeFirst();
  return Number(row?.debt ?? 0);
}

/**
 * Settles the wallet's debt from a credit just posted (docs/debt.md "Settlement"): the credit's lot
 * was created whole; one entry `debt:{creditReference}:settled` (reason `debt_settled`) takes
 * `min(debt, credit)` from that lot, and the open debt rows (take_back_shortfalls) it settles,
 * oldest first, record it (`recovered`, which moves the wallet's `debt` through the rows'
 * trigger), as do the take-backs' own records (settleSource). In the credit's transaction, under
 * the wallet lock the credit's posting took. Runs only for a posting that says `settlesDebt`
 * (paid credits; a grant that asks for it) and was posted now: a replayed credit settles
 * nothing again, and the settlement's reference is unique besides. Returns the tokens settled.
 */
export async function settleDebtFromCredit(
  uow: UnitOfWork,
  credit: Pick<LedgerPosting, 'userId' | 'reference' | 'amount'>,
  walletDebt: number,
): Promise<number> {
  // guard: debt-policy-forgive
  if (walletDebt <= 0 || uow.debtPolicy !== 'settle' || credit.amount <= 0) return 0;
  const { trx } = uow;
  // guard: debt-settles-at-most-credit
  const settled = await spreadOverOpenDebts(trx, credit.userId, Math.min(credit.amount, walletDebt), 'recovered');
  if (settled === 0) return 0;
  const posting: LedgerPosting = {
    userId: credit.userId,
    reference: references.debtSettled(credit.reference),
    amount: -settled,
    reason: 'debt_settled',
    lots: { kind: 'take-back', fromLotOf: credit.reference },
  };
  const outcome = await lockWalletAndInsert(trx, uow.outbox, posting);
  // The credit just posted under the same lock holds at least `settled` more than before, and the
  // reference is new with the credit: anything but a posted entry is a broken invariant.
  if (outcome?.kind !== 'posted') throw new Error(`debt settlement ${posting.reference} was not posted`);
  await applyLotMovement(trx, outcome.entry, posting.lots, outcome.lots);
  uow.outbox.written(outcome.messageIds);
  await writeDebtChanged(uow, {
    userId: credit.userId,
    change: -settled,
    reason: 'debt_settled',
    reference: posting.reference,
  });
  return settled;
}

/**
 * Support forgives `amount` of the user's debt (all of it when absent), oldest rows first, under
 * the wallet lock (docs/debt.md "Forgiving"): each row's `forgiven` grows (its trigger moves the
 * wallet's debt), no token moves and the take-backs' records stay as they are (the refund still
 * took what it took; the rest is no longer owed). The caller audits it in the same transaction.
 * Returns what was forgiven and the debt left.
 */
export async function forgiveDebt(
  uow: UnitOfWork,
  request: { userId: string; amount?: number | undefined },
): Promise<{ forgiven: number; debt: number }> {
  const { trx } = uow;
  const wallet = await sql<{ debt: number }>`
    SELECT debt FROM wallets WHERE user_id = ${request.userId} FOR UPDATE`.execute(trx);
  const debt = Number(wallet.rows[0]?.debt ?? 0);
  const amount = Math.min(request.amount ?? debt, debt);
  if (amount <= 0) return { forgiven: 0, debt };
  // guard: forgive-row-forgiven
  const forgiven = await spreadOverOpenDebts(trx, request.userId, amount, 'forgiven');
  await writeDebtChanged(uow, { userId: request.userId, change: -forgiven, reason: 'forgiven', reference: null });
  return { forgiven, debt: debt - forgiven };
}

/**
 * Spreads up to `tokens` over the user's open debt rows, oldest first (locked FOR UPDATE), adding
 * each row's share to `recovered` (settled by tokens: the take-back's own records move with it,
 * settleSource) or `forgiven` (no token moved, the records stay); the rows' trigger moves the
 * wallet's debt. Returns what was spread.
 */
async function spreadOverOpenDebts(
  trx: Transaction<DB>,
  userId: string,
  tokens: number,
  column: 'recovered' | 'forgiven',
): Promise<number> {
  if (tokens <= 0) return 0;
  const open = await sql<{ id: number; source: TakeBackSource; source_id: string; open: number }>`
    SELECT id, source, source_id, (shortfall - recovered - forgiven)::bigint AS open
      FROM take_back_shortfalls
     WHERE user_id = ${userId} AND closed_at IS NULL AND recovered + forgiven < shortfall
     ORDER BY id
       FOR UPDATE`.execute(trx);
  let spread = 0;
  for (const row of open.rows) {
    const share = Math.min(tokens - spread, Number(row.open));
    if (share <= 0) break;
    spread += share;
    await sql`UPDATE take_back_shortfalls SET ${sql.ref(column)} = ${sql.ref(column)} + ${share} WHERE id = ${row.id}`.execute(
      trx,
    );
    if (column === 'recovered') await settleSource(trx, row.source, row.source_id, share);
  }
  return spread;
}

/**
 * A settled debt row's take-back records move with it: the payment's `tokens_refunded` and
 * `refund_shortfall`, the dispute's `tokens_taken`, the token refund's `tokens_taken` (so a
 * reinstatement still gives back exactly what was taken). A priced capture's has none.
 */
export async function settleSource(trx: Transaction<DB>, source: TakeBackSource, sourceId: string, tokens: number) {
  const moveOnPayment = (paymentId: number) =>
    trx
      .updateTable('payments')
      .set({
        tokens_refunded: sql`tokens_refunded + ${tokens}`,
        refund_shortfall: sql`refund_shortfall - ${tokens}`,
        updated_at: sql`now()`,
      })
      .where('id', '=', paymentId)
      .execute();
  if (source === 'priced_capture') return;
  if (source === 'stripe_refund') {
    await moveOnPayment(Number(sourceId));
  } else if (source === 'stripe_dispute') {
    const dispute = await trx
      .updateTable('stripe_disputes')
      .set({ tokens_taken: sql`tokens_taken + ${tokens}` })
      .where('dispute_id', '=', sourceId)
      .returning('payment_id')
      .executeTakeFirstOrThrow();
    await moveOnPayment(dispute.payment_id);
  } else if (source === 'apple_refund') {
    // guard: apple-refund-settles-source
    const refund = await trx
      .updateTable('apple_refunds')
      .set({ tokens_taken: sql`tokens_taken + ${tokens}` })
      .where('id', '=', Number(sourceId))
      .returning('payment_id')
      .executeTakeFirstOrThrow();
    await moveOnPayment(refund.payment_id);
  } else {
    await trx
      .updateTable('token_refunds')
      .set({ tokens_taken: sql`tokens_taken + ${tokens}` })
      .where('id', '=', Number(sourceId))
      .execute();
  }
}
