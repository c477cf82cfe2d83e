import { type RawBuilder, sql } from 'kysely';
import { type AutoTopupTrigger, autoTopupThresholdSql, autoTopupTriggerOf } from '../auto-topup/trigger-auto-topup';
import type { HoldRow } from '../db/schema';
import type { UserSql } from '../db/user-sql';
import { activeHold, fundsOf, readWalletFunds, type WalletFunds } from '../ledger/held-tokens';
import { takeFreedVoidedTokens } from '../ledger/voided-lots';
import { recoverShortfallsFromHold } from '../refunds/take-back-shortfalls';
import { type SpendRead, type SpendReadRow, spendReadOf, spendReadSql } from '../spend-limits/spend-limits';
import type { UnitOfWork } from '../unit-of-work/unit-of-work';
import { giveBackHoldUses } from './give-back-hold-uses';

/** A hold as its operation reads it under the wallet lock, with `expired` by the database clock. */
export type LockedHold = HoldRow & { expired: boolean };

export interface LockedFunds extends WalletFunds {
  /** Whether the user has a take-back shortfall still open (what a hold frees may settle it). */
  shortfallsOpen: boolean;
  /** The hold asked for (by id or by reference), when it exists for this user. */
  hold: LockedHold | undefined;
}

/** The funds a spend locked (lockWalletForSpend): with what the spend limits and auto top-up need. */
export interface LockedSpendFunds extends LockedFunds {
  spend: SpendRead;
  /** The user's auto top-up threshold when it is on with a saved card (triggerAutoTopup), else null. */
  autoTopup: AutoTopupTrigger | null;
}

/**
 * Locks the user's wallet row (FOR UPDATE: every writer of holds and lots takes it first, so
 * concurrent holds, captures and spends of one wallet serialize), then reads in ONE more
 * statement (after the lock is granted, so it sees what the lock's previous holder committed)
 * what active holds reserve, whether holds lapsed unsettled, whether a shortfall is open, and the
 * hold the operation is about; settles lapsed holds (settleLapsedHolds) if any; answers the funds
 * as they are now. Every hold operation, app debit and studio debit starts with it (a new spend
 * through lockWalletForSpend).
 */
export function lockWalletFunds(
  uow: UnitOfWork,
  userId: string,
  about: { holdId: string } | { holdReference: string } | null = null,
): Promise<LockedFunds> {
  return lockAndRead(uow, userId, about, false);
}

/**
 * lockWalletFunds for a new spend (a debit, a usage, a hold placed, a studio debit): the same
 * statement also reads what the spend limits decide on (spendReadSql: the user's own limits and
 * what they spent today and this month), so a limit costs no statement of its own. The counters
 * it reads are written by the posting statements of spends, under this same lock. It reads the
 * user's auto top-up threshold too (autoTopupThresholdSql), for the trigger after the spend.
 */
export async function lockWalletForSpend(
  uow: UnitOfWork,
  userId: string,
  about: { holdReference: string } | null = null,
): Promise<LockedSpendFunds> {
  const { spend, autoTopup, ...funds } = await lockAndRead(uow, userId, about, true);
  if (!spend) throw new Error(`the spend of ${userId} was not read`);
  return { ...funds, spend, autoTopup: autoTopup ?? null };
}

async function lockAndRead(
  uow: UnitOfWork,
  userId: string,
  about: { holdId: string } | { holdReference: string } | null,
  spending: boolean,
): Promise<LockedFunds & { spend?: SpendRead; autoTopup?: AutoTopupTrigger | null }> {
  const { trx } = uow;
  // guard: hold-wallet-lock
  const wallet = await sql<{ balance: number }>`
    SELECT balance FROM wallets WHERE user_id = ${userId} FOR UPDATE`.execute(trx);
  const balance = Number(wallet.rows[0]?.balance ?? 0);
  const which =
    about === null
      ? sql`FALSE`
      : 'holdId' in about
        ? sql`h.id = ${about.holdId}`
        : sql`h.reference = ${about.holdReference}`;
  const read = await sql<
    FundsReadRow & {
      [K in keyof LockedHold]: LockedHold[K] | null;
    }
  >`
    SELECT ${fundsReadColumns(userId, spending)}
           x.*
      FROM (SELECT 1) AS one
      LEFT JOIN (SELECT h.*, (h.status = 'held' AND h.expires_at <= now()) AS expired
                   FROM holds h WHERE h.user_id = ${userId} AND ${which}) AS x ON TRUE`.execute(trx);
  const row = read.rows[0];
  if (!row) throw new Error(`the funds of ${userId} cannot be read`);
  const {
    held,
    lapsed,
    shortfalls_open: shortfallsOpen,
    spend: spendRow,
    auto_topup_threshold: autoTopupThreshold,
    ...holdColumns
  } = row;
  const hold = holdColumns.id === null ? undefined : (holdColumns as LockedHold);
  const funds = await lockedFundsOf(uow, userId, balance, { held, lapsed, shortfalls_open: shortfallsOpen });
  const spend = spendRow ? { spend: spendReadOf(spendRow), autoTopup: autoTopupTriggerOf(autoTopupThreshold) } : {};
  return { ...funds, hold, ...spend };
}

/** What the read after the wallet lock answers of a user (fundsReadColumns). */
interface FundsReadRow {
  held: number;
  lapsed: boolean;
  shortfalls_open: boolean;
  spend?: SpendReadRow;
  auto_topup_threshold?: number | string | null;
}

/**
 * The read after the wallet lock, as select-list columns (each followed by a comma) of the user
 * `user` (a parameter, or a batch's column: lockWalletsForSpend): what active holds reserve,
 * whether holds lapsed unsettled, whether a shortfall is open, and for a spend what the spend
 * limits decide on (spendReadSql) and the auto top-up threshold (autoTopupThresholdSql).
 */
function fundsReadColumns(user: UserSql, spending: boolean) {
  // guard: hold-shortfalls-open
  return sql`(SELECT coalesce(sum(a.amount), 0) FROM holds a WHERE a.user_id = ${user} AND ${activeHold('a')})::bigint AS held,
           EXISTS (SELECT 1 FROM holds l
                    WHERE l.user_id = ${user} AND l.status = 'held' AND l.settled_at IS NULL
                      AND l.expires_at <= now()) AS lapsed,
           EXISTS (SELECT 1 FROM take_back_shortfalls s
                    WHERE s.user_id = ${user} AND s.closed_at IS NULL AND s.recovered + s.forgiven < s.shortfall) AS shortfalls_open,
           ${
             spending
               ? sql`(SELECT row_to_json(sp) FROM (${spendReadSql(user)}) AS sp) AS spend,
                            (${autoTopupThresholdSql(user)}) AS auto_topup_threshold,`
               : sql``
           }`;
}

/** The funds as locked and read; lapsed holds settled first (settleLapsedHolds), which may move them. */
async function lockedFundsOf(
  uow: UnitOfWork,
  userId: string,
  balance: number,
  read: Pick<FundsReadRow, 'held' | 'lapsed' | 'shortfalls_open'>,
): Promise<WalletFunds & { shortfallsOpen: boolean }> {
  const shortfallsOpen = read.shortfalls_open;
  if (!read.lapsed) return { ...fundsOf(balance, Number(read.held)), shortfallsOpen };
  // A lapsed hold already stopped counting; only a recovery it made moves the funds.
  await settleLapsedHolds(uow, userId);
  return { ...(await readWalletFunds(uow.trx, userId, { lock: false })), shortfallsOpen };
}

/**
 * A spend's fence as lockWalletsForSpend reads it: given the spend's reference (a column of the
 * batch's rows), a scalar sub-select of the row already under it as JSON (row_to_json), or NULL.
 */
export type SpendFenceSql = (reference: RawBuilder<string>) => RawBuilder<unknown>;

/**
 * lockWalletForSpend for several spends of distinct users in one transaction (a batch of debits,
 * debitTokensTogether, or of usage, recordUsagesTogether): the wallets locked in user order in ONE
 * statement (as the posting statement of several postings locks them, so the two never wait on
 * each other in a cycle), then ONE read of every user's funds (fundsReadColumns, after the locks
 * are granted) and of the row already under each spend's reference (`fence`: the ledger entry of
 * a debit, the use of a usage; read under its wallet lock as a single spend reads it), as JSON.
 * Answers by position.
 */
export async function lockWalletsForSpend<Previous>(
  uow: UnitOfWork,
  spends: readonly { userId: string; reference: string }[],
  fence: SpendFenceSql,
): Promise<{ funds: LockedSpendFunds; previous: Previous | undefined }[]> {
  const { trx } = uow;
  const userIds = spends.map((spend) => spend.userId);
  // guard: batch-wallet-locks
  const wallets = await sql<{ user_id: string; balance: number }>`
    SELECT user_id, balance FROM wallets
     WHERE user_id IN (SELECT unnest(${userIds}::text[])) ORDER BY user_id FOR UPDATE`.execute(trx);
  const balances = new Map(wallets.rows.map((row) => [row.user_id, Number(row.balance)]));
  const read = await sql<FundsReadRow & { position: number; previous: Previous | null }>`
    SELECT (r.position - 1)::int AS position, ${fundsReadColumns(sql.ref('r.user_id'), true)}
           (${fence(sql.ref('r.reference'))}) AS previous
      FROM unnest(${userIds}::text[], ${spends.map((spend) => spend.reference)}::text[])
           WITH ORDINALITY AS r (user_id, reference, position)`.execute(trx);
  const answers = new Array<{ funds: LockedSpendFunds; previous: Previous | undefined }>(spends.length);
  for (const row of read.rows) {
    const { userId } = spends[row.position] as { userId: string };
    const funds = await lockedFundsOf(uow, userId, balances.get(userId) ?? 0, row);
    if (!row.spend) throw new Error(`the spend of ${userId} was not read`);
    answers[row.position] = {
      funds: {
        ...funds,
        hold: undefined,
        spend: spendReadOf(row.spend),
        autoTopup: autoTopupTriggerOf(row.auto_topup_threshold),
      },
      previous: row.previous === null ? undefined : row.previous,
    };
  }
  return answers;
}

/**
 * Ends the user's holds that passed expires_at and are not settled yet (docs/holds.md): they
 * stopped counting at expires_at already (the active-hold predicate), with no ledger row; this
 * only marks them settled (out of the open-holds index), takes what each frees on a voided lot
 * (takeFreedVoidedTokens) and lets the rest settle a take-back shortfall recorded while it was active (recoverShortfallsFromHold), oldest hold
 * first. Needs the wallet lock. Lazy: run by the next operation that locks the wallet here, and
 * by the expiry sweeper for wallets nobody touches. Returns the holds settled.
 */
export async function settleLapsedHolds(uow: UnitOfWork, userId: string): Promise<number> {
  const lapsed = await sql<{ id: string; amount: number; ledger_marker: number; expires_at: Date; priced: boolean }>`
    UPDATE holds SET settled_at = now()
     WHERE user_id = ${userId} AND status = 'held' AND settled_at IS NULL AND expires_at <= now()
    RETURNING id, amount, ledger_marker, expires_at, priced`.execute(uow.trx);
  // A lapsed hold by estimate gives its use back, as a released one does.
  await giveBackHoldUses(
    uow,
    lapsed.rows.filter((hold) => hold.priced).map((hold) => hold.id),
  );
  const holds = [...lapsed.rows].sort((a, b) => Number(a.ledger_marker) - Number(b.ledger_marker));
  for (const hold of holds) {
    // What it frees on a voided lot is taken at once (docs/lots.md "Voids"); only the rest is the user's.
    // guard: lapsed-hold-takes-voided
    const voided = await takeFreedVoidedTokens(uow, userId, { holdId: hold.id });
    await recoverShortfallsFromHold(uow, {
      userId,
      holdId: hold.id,
      ledgerMarker: Number(hold.ledger_marker),
      expiresAt: new Date(hold.expires_at),
      // guard: lapsed-hold-frees-shortfall
      freedTokens: Number(hold.amount) - voided.taken,
    });
  }
  return holds.length;
}
