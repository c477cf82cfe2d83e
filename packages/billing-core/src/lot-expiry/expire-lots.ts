import { sql, type Transaction } from 'kysely';
import { writeAppWebhookMessage } from '../app-webhooks/write-app-webhook-message';
import type { DB } from '../db/schema';
import { settleLapsedHolds } from '../holds/lock-wallet-funds';
import { activeHold, heldByLot } from '../ledger/held-tokens';
import { closeLotGap, moveLots } from '../ledger/lots';
import { postLedgerEntry } from '../ledger/post-ledger-entry';
import { lotSources, references } from '../references';
import { inUnitOfWork, type UnitOfWork, type UnitOfWorkDeps } from '../unit-of-work/unit-of-work';

export interface CreditExpiryOptions {
  /** Wallets one pass claims (each in the pass's one transaction). */
  batchSize: number;
  /** wallet.credits_expiring is written this many hours before a lot expires (CREDIT_EXPIRY_NOTICE_HOURS). */
  noticeHours: number;
}

export interface CreditExpiryResult {
  /** Wallets the pass claimed. */
  wallets: number;
  /** Expiry entries posted. */
  expired: number;
  /** Tokens carried into rollover lots. */
  rolledOver: number;
}

/** The months a rollover lot lives after the lot it came from: every catalog period is a month (docs/lots.md). */
const ROLLOVER_MONTHS = 1;

interface DueLot {
  id: number;
  category: string;
  remaining: number;
  held: number;
  rollover_max: number;
  /** What of rollover_max the lot has already carried (a hold that ended after its expiry frees more later). */
  rolled_over: number;
  expires_at: Date;
}

/**
 * One pass of the expiry sweeper (docs/lots.md "Expiry and rollover"), in one unit of work.
 * Claims up to batchSize wallets that have a lot past its expires_at with tokens left, their rows
 * locked FOR UPDATE SKIP LOCKED (any number of replicas split the wallets; a wallet a posting
 * holds is taken by the next pass), then their due lots (every writer of lots holds the wallet
 * first, so this never deadlocks). Per lot: what is left and not held first rolls over (a
 * `subscription` lot, up to what is left of its rolloverMax: rollOver), the rest is
 * one ledger entry `lot:{lotId}:expired` (`:expired:{n}` for the lot's n-th), reason
 * `credits_expired`, drawn from the lot, announced as wallet.credits_expired. Idempotent: an
 * expired lot has nothing left, and the entry's reference is unique.
 */
export async function expireDueLots(deps: UnitOfWorkDeps, options: { batchSize: number }): Promise<CreditExpiryResult> {
  return inUnitOfWork(deps, async (uow) => {
    const { trx } = uow;
    // A lot whose tokens are all held is not due (nothing of it can expire until the hold ends):
    // left out here, it cannot fill a batch that moves nothing and starve the wallets behind it.
    // guard: expiry-skip-locked
    const wallets = await sql<{ user_id: string; balance: number }>`
      SELECT user_id, balance FROM wallets
       WHERE user_id IN (
         SELECT l.user_id FROM credit_lots l
          WHERE l.remaining > 0 AND l.expires_at IS NOT NULL AND l.expires_at <= now()
            AND l.remaining > (
              SELECT coalesce(sum(hl.amount), 0) FROM hold_lots hl JOIN holds h ON h.id = hl.hold_id
               WHERE hl.lot_id = l.id AND ${activeHold('h')})
          ORDER BY l.expires_at
          LIMIT ${options.batchSize})
       ORDER BY user_id
         FOR UPDATE SKIP LOCKED`.execute(trx);
    const result: CreditExpiryResult = { wallets: wallets.rows.length, expired: 0, rolledOver: 0 };
    for (const wallet of wallets.rows) {
      // A gap an old replica left (entries without lots) is closed first, so `remaining` is true.
      await closeLotGap(trx, wallet.user_id, Number(wallet.balance));
      // Tokens a lot frees after its expiry roll into its rollover lot, which may itself have
      // expired by now: a second look at the due lots expires them in this pass too (a rollover
      // lot never rolls over, so two looks are enough).
      // guard: expiry-second-look
      for (let look = 0, rolledIntoExpired = true; look < 2 && rolledIntoExpired; look += 1) {
        rolledIntoExpired = false;
        for (const lot of await lockDueLots(trx, wallet.user_id)) {
          const expirable = Number(lot.remaining) - Number(lot.held);
          if (expirable <= 0) continue;
          const rolled = await rollOver(trx, wallet.user_id, lot, expirable);
          result.rolledOver += rolled.carried;
          rolledIntoExpired ||= rolled.intoExpired;
          if (
            expirable - rolled.carried > 0 &&
            (await postExpiry(uow, wallet.user_id, lot, expirable - rolled.carried))
          ) {
            result.expired += 1;
          }
        }
      }
    }
    return result;
  });
}

/** The wallet's lots past expires_at with tokens left, locked in id order (the wallet row is held), each with what active holds reserve of it. */
async function lockDueLots(trx: Transaction<DB>, userId: string): Promise<DueLot[]> {
  // guard: expiry-due-lots
  // guard: expiry-excludes-held
  const lots = await sql<DueLot>`
    WITH due AS MATERIALIZED (
      SELECT id, category, remaining, rollover_max, rolled_over, expires_at
        FROM credit_lots
       WHERE user_id = ${userId} AND remaining > 0 AND expires_at IS NOT NULL AND expires_at <= now()
       ORDER BY id
         FOR UPDATE),
    held AS (${heldByLot(userId)})
    -- What of the lot active holds reserve does not expire: held tokens do not expire while held.
    SELECT d.id, d.category, d.remaining, d.rollover_max, d.rolled_over, d.expires_at, coalesce(h.held, 0)::bigint AS held
      FROM due d LEFT JOIN held h ON h.lot_id = d.id
     ORDER BY d.id`.execute(trx);
  return lots.rows;
}

/**
 * Carries up to what is left of the lot's rollover allowance (rolloverMax less what it carried
 * before) of its expirable tokens into its `subscription` rollover lot (source
 * `lot:{lotId}:rollover`, expiring a period after this lot, rolloverMax 0 so it does not roll over
 * again). The lot remembers what it carried (`rolled_over`), so tokens it frees after its expiry
 * (a hold released, a late give-back) roll over too, into the same rollover lot, until the
 * allowance is used (docs/lots.md "Expiry and rollover"). A move between lots: the balance does
 * not change, so no ledger entry. Returns the tokens carried and whether the rollover lot has
 * expired already (a hold on this lot outlived it).
 */
async function rollOver(
  trx: Transaction<DB>,
  userId: string,
  lot: DueLot,
  expirable: number,
): Promise<{ carried: number; intoExpired: boolean }> {
  const none = { carried: 0, intoExpired: false };
  if (lot.category !== 'subscription') return none;
  // guard: rollover-max
  const carried = Math.min(Number(lot.rollover_max) - Number(lot.rolled_over), expirable);
  if (carried <= 0) return none;
  // guard: rollover-once
  const into = await sql<{ expired: boolean }>`
    INSERT INTO credit_lots (user_id, category, source, amount, remaining, expires_at, rollover_max)
    VALUES (${userId}, 'subscription', ${lotSources.rollover(lot.id)}, ${carried}, ${carried},
            ${lot.expires_at}::timestamptz + make_interval(months => ${ROLLOVER_MONTHS}), 0)
    ON CONFLICT (source) DO UPDATE
      SET amount = credit_lots.amount + excluded.amount, remaining = credit_lots.remaining + excluded.remaining
    RETURNING expires_at <= now() AS expired`.execute(trx);
  await sql`UPDATE credit_lots SET rolled_over = rolled_over + ${carried} WHERE id = ${lot.id}`.execute(trx);
  await moveLots(trx, [{ lotId: Number(lot.id), amount: carried }], -1);
  return { carried, intoExpired: into.rows[0]?.expired === true };
}

/** Posts the lot's expiry entry for `tokens`; false when its reference was already posted. */
async function postExpiry(uow: UnitOfWork, userId: string, lot: DueLot, tokens: number): Promise<boolean> {
  // The lot's earlier expiries (a give-back returned tokens after the first): this is the n-th.
  const earlier = await sql<{ count: number }>`
    SELECT count(*)::int AS count
      FROM ledger_draws d JOIN ledger_entries e ON e.id = d.ledger_entry_id
     WHERE d.lot_id = ${lot.id} AND e.reason = 'credits_expired'`.execute(uow.trx);
  const posted = await postLedgerEntry(uow, {
    userId,
    // guard: expiry-reference-count
    reference: references.lotExpired(lot.id, Number(earlier.rows[0]?.count ?? 0) + 1),
    amount: -tokens,
    reason: 'credits_expired',
    lots: { kind: 'expire', lotId: Number(lot.id) },
  });
  return posted.kind === 'posted';
}

/**
 * Writes wallet.credits_expiring once per lot that expires within noticeHours and has tokens
 * left, in one unit of work: wallets claimed FOR UPDATE SKIP LOCKED as expireDueLots does, then
 * the conditional update `expiry_notice_at IS NULL → now()` marks each lot, and only a lot it
 * marked gets its message. Returns the messages written.
 */
export async function noticeExpiringLots(
  deps: UnitOfWorkDeps,
  options: { batchSize: number; noticeHours: number },
): Promise<{ wallets: number; notices: number }> {
  return inUnitOfWork(deps, async (uow) => {
    const { trx } = uow;
    const window = sql`now() + make_interval(hours => ${options.noticeHours})`;
    // guard: expiring-notice-once
    // guard: expiring-notice-window
    const due = sql`remaining > 0 AND expires_at IS NOT NULL AND expires_at > now() AND expires_at <= ${window}
      AND expiry_notice_at IS NULL`;
    const wallets = await sql<{ user_id: string }>`
      SELECT user_id FROM wallets
       WHERE user_id IN (SELECT user_id FROM credit_lots WHERE ${due} ORDER BY expires_at LIMIT ${options.batchSize})
       ORDER BY user_id
         FOR UPDATE SKIP LOCKED`.execute(trx);
    if (wallets.rows.length === 0) return { wallets: 0, notices: 0 };
    const marked = await sql<{ id: number; user_id: string; remaining: number; expires_at: Date }>`
      UPDATE credit_lots SET expiry_notice_at = now()
       WHERE user_id = ANY(${wallets.rows.map((w) => w.user_id)}::text[]) AND ${due}
      RETURNING id, user_id, remaining, expires_at`.execute(trx);
    const notices = [...marked.rows].sort((a, b) => Number(a.id) - Number(b.id));
    for (const lot of notices) {
      await writeAppWebhookMessage(uow, {
        type: 'wallet.credits_expiring',
        userId: lot.user_id,
        data: {
          userId: lot.user_id,
          lotId: Number(lot.id),
          remaining: Number(lot.remaining),
          expiresAt: new Date(lot.expires_at).toISOString(),
        },
      });
    }
    return { wallets: wallets.rows.length, notices: notices.length };
  });
}

/**
 * Settles holds that lapsed (past expires_at, never captured or released) on wallets nobody has
 * locked since (settleLapsedHolds, which the next operation on the wallet would run anyway): not
 * needed for `held` to be right (a lapsed hold stopped counting at its expires_at), but it lets
 * what a lapsed hold frees settle a take-back's shortfall before those tokens expire or are spent,
 * and keeps the open-holds index small. Wallets claimed FOR UPDATE SKIP LOCKED, in one unit of work.
 */
export async function settleLapsedHoldsPass(
  deps: UnitOfWorkDeps,
  options: { batchSize: number },
): Promise<{ wallets: number; settled: number }> {
  return inUnitOfWork(deps, async (uow) => {
    const wallets = await sql<{ user_id: string }>`
      SELECT user_id FROM wallets
       WHERE user_id IN (
         SELECT user_id FROM holds
          WHERE status = 'held' AND settled_at IS NULL AND expires_at <= now()
          ORDER BY expires_at
          LIMIT ${options.batchSize})
       ORDER BY user_id
         FOR UPDATE SKIP LOCKED`.execute(uow.trx);
    let settled = 0;
    for (const wallet of wallets.rows) settled += await settleLapsedHolds(uow, wallet.user_id);
    return { wallets: wallets.rows.length, settled };
  });
}

/** One sweep: the notices, lapsed holds, then the expiries, each pass repeated while a batch comes back full. */
export async function sweepCreditExpiry(
  deps: UnitOfWorkDeps,
  options: CreditExpiryOptions,
): Promise<{ notices: number; expired: number; rolledOver: number }> {
  const total = { notices: 0, expired: 0, rolledOver: 0 };
  for (;;) {
    const pass = await noticeExpiringLots(deps, options);
    total.notices += pass.notices;
    if (pass.wallets < options.batchSize || pass.notices === 0) break;
  }
  for (;;) {
    const pass = await settleLapsedHoldsPass(deps, options);
    if (pass.wallets < options.batchSize || pass.settled === 0) break;
  }
  for (;;) {
    const pass = await expireDueLots(deps, options);
    total.expired += pass.expired;
    total.rolledOver += pass.rolledOver;
    // A full batch that moved nothing (a lot held between the claim and its lock) waits for the next tick.
    if (pass.wallets < options.batchSize || pass.expired + pass.rolledOver === 0) break;
  }
  return total;
}
