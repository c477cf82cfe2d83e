import { sql } from 'kysely';
import { readWalletFunds, type WalletFunds } from '../ledger/held-tokens';
import { recoverShortfallsFromHold } from '../refunds/take-back-shortfalls';
import type { UnitOfWork } from '../unit-of-work/unit-of-work';

/**
 * Locks the user's wallet row (FOR UPDATE: every writer of holds and lots takes it first, so
 * concurrent holds, captures and spends of one wallet serialize), settles the holds that lapsed
 * since the wallet was last locked here (settleLapsedHolds), and answers the funds as they are
 * now. Every hold operation and every app debit starts with it.
 */
export async function lockWalletFunds(uow: UnitOfWork, userId: string): Promise<WalletFunds> {
  const funds = await readWalletFunds(uow.trx, userId, { lock: true });
  // A lapsed hold already stopped counting; only a recovery it made moves the funds.
  const settled = await settleLapsedHolds(uow, userId);
  return settled > 0 ? readWalletFunds(uow.trx, userId, { lock: false }) : funds;
}

/**
 * Ends the user's holds that passed expires_at and are not settled yet (docs/holds.md): they
 * stopped counting at expires_at already (the active-hold predicate), with no ledger row; this
 * only marks them settled (out of the open-holds index) and lets what each frees settle a
 * take-back shortfall recorded while it was active (recoverShortfallsFromHold), oldest hold
 * first. Needs the wallet lock. Lazy: run by the next operation that locks the wallet here, and
 * by the expiry sweeper for wallets nobody touches. Returns the holds settled.
 */
export async function settleLapsedHolds(uow: UnitOfWork, userId: string): Promise<number> {
  const lapsed = await sql<{ id: string; amount: number; ledger_marker: number; expires_at: Date }>`
    UPDATE holds SET settled_at = now()
     WHERE user_id = ${userId} AND status = 'held' AND settled_at IS NULL AND expires_at <= now()
    RETURNING id, amount, ledger_marker, expires_at`.execute(uow.trx);
  const holds = [...lapsed.rows].sort((a, b) => Number(a.ledger_marker) - Number(b.ledger_marker));
  for (const hold of holds) {
    await recoverShortfallsFromHold(uow, {
      userId,
      holdId: hold.id,
      ledgerMarker: Number(hold.ledger_marker),
      expiresAt: new Date(hold.expires_at),
      freedTokens: Number(hold.amount),
    });
  }
  return holds.length;
}
