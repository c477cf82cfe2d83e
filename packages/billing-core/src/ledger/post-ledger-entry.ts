import { precompiledSql } from '@tally/platform/db';
import { sql, type Transaction } from 'kysely';
import type { DB, LedgerEntryRow } from '../db/schema';
import { InsufficientBalanceError, LedgerReferenceConflictError } from '../errors';
import type { UnitOfWork, UnitOfWorkOutbox } from '../unit-of-work/unit-of-work';
import { ensureWallet } from './ensure-wallet';
import { ledgerEntryMessagesCte } from './ledger-entry-messages';
import { applyLotMovement, assertMovementFits, type LotExpiry, type LotMovement, type LotsBeforeEntry } from './lots';

export { closeLotGap, createLot, type LotExpiry, type LotMovement, openingLotSource, plainLots } from './lots';

export interface LedgerPosting {
  userId: string;
  /** Deterministic reference from `references`; the database keeps it unique. */
  reference: string;
  /** Signed whole tokens: positive credits, negative debits. Never zero. */
  amount: number;
  /** Short machine-readable reason, e.g. `token_pack_purchase`. */
  reason: string;
  /** The inbox event that caused this entry, when there is one. */
  inboxEventId?: number | null;
  /**
   * What the entry does to the wallet's lots (docs/lots.md): a credit names its lot (category,
   * expiry), a debit whether it is a spend or a take-back, a give-back the debit it returns.
   * Required: forgetting a credit's lot is a compile error.
   */
  lots: LotMovement;
}

export type PostLedgerEntryResult =
  | { kind: 'posted'; entry: LedgerEntryRow }
  | { kind: 'already-posted'; entry: LedgerEntryRow };

/**
 * Moves a wallet's balance by one ledger row, inside the caller's unit of work.
 *
 * Invariants: the wallet row is locked first, so balance_before is the balance every concurrent
 * writer sees; the insert uses ON CONFLICT (reference) DO NOTHING, so a second posting with the
 * same reference (another replica, a replay, a retried job) changes nothing and returns the
 * first entry as `already-posted`. The database trigger moves the cached wallet balance to
 * balance_after. The same statement writes the entry's app webhook messages (wallet.credited or
 * wallet.debited, or wallet.credits_expired for the expiry sweeper's entry, and wallet.balance_low on a crossing of the outbox's threshold): only for an
 * entry it posts, never for `already-posted`; the unit of work records them and hands them off
 * after its commit. The entry's lots move right after (applyLotMovement: the credit's lot, the
 * debit's draws, the give-back's returns), still under the wallet lock.
 *
 * Idempotent by reference. Throws LedgerReferenceConflictError when the reference already posts
 * a different user or amount (never a silent "already posted"), InsufficientBalanceError when a
 * debit would go below zero, and RangeError for a zero or non-integer amount.
 */
export async function postLedgerEntry(uow: UnitOfWork, posting: LedgerPosting): Promise<PostLedgerEntryResult> {
  if (!Number.isSafeInteger(posting.amount) || posting.amount === 0) {
    throw new RangeError(`ledger amount must be a non-zero whole number of tokens, got ${posting.amount}`);
  }
  assertMovementFits(posting.lots, posting.amount);
  // One round trip in the common case: lock the wallet, look the reference up and insert the entry
  // with its messages, all in one statement. A wallet that does not exist yet is created, then
  // the statement runs again.
  const { trx, outbox } = uow;
  let outcome = await lockWalletAndInsert(trx, outbox, posting);
  if (!outcome) {
    await ensureWallet(uow, posting.userId);
    outcome = await lockWalletAndInsert(trx, outbox, posting);
    if (!outcome) throw new Error(`wallet ${posting.userId} was created but cannot be locked`);
  }
  if (outcome.kind === 'posted') {
    // Under the wallet lock the statement took: the entry's lots move in the same transaction
    // (a credit's lot, when the statement found the lots matching the balance, is already in).
    await applyLotMovement(trx, outcome.entry, posting.lots, outcome.lots);
    outbox.written(outcome.messageIds);
    return { kind: 'posted', entry: outcome.entry };
  }
  if (outcome.kind === 'existing') return alreadyPosted(outcome.entry, posting);
  const balanceAfter = outcome.balance + posting.amount;
  if (balanceAfter < 0) throw new InsufficientBalanceError(posting.userId, outcome.balance, -posting.amount);

  // Another transaction committed the same reference (for another wallet) after this statement's
  // snapshot was taken: the insert found the conflict, the look-up could not see it.
  const winner = await findEntryByReference(trx, posting.reference);
  if (!winner) throw new Error(`ledger reference ${posting.reference} conflicted but cannot be read`);
  return alreadyPosted(winner, posting);
}

type LockedInsert =
  /**
   * The entry this statement inserted, the ids of its messages (for the hand-off after commit),
   * and what the statement already did to the wallet's lots (LotsBeforeEntry).
   */
  | { kind: 'posted'; entry: LedgerEntryRow; messageIds: number[]; lots: LotsBeforeEntry }
  /** An entry already posted under the reference: nothing was inserted. */
  | { kind: 'existing'; entry: LedgerEntryRow }
  /** Nothing inserted and nothing found: the balance would go below zero, or a concurrent insert won. */
  | { kind: 'none'; balance: number };

/**
 * The wallet locked (FOR UPDATE, so balance_before is what every concurrent writer sees: a wallet
 * changed while the statement waited for the lock is read at its latest version), any entry already
 * posted under the reference read, and only when there is none and the balance stays at zero or
 * above, the entry inserted under ON CONFLICT (reference) DO NOTHING with its app webhook messages
 * (a message exists only for an entry this statement inserted). Undefined when the wallet does not
 * exist. The database trigger moves the wallet to balance_after at the end of the statement.
 */
async function lockWalletAndInsert(
  trx: Transaction<DB>,
  outbox: UnitOfWorkOutbox,
  posting: LedgerPosting,
): Promise<LockedInsert | undefined> {
  const credit = posting.lots.kind === 'credit' ? posting.lots : null;
  const expiry = credit ? lotExpirySlots(credit.expiresAt) : { lotExpiresAt: null, lotMonths: null, lotAfter: null };
  const rows = await lockWalletAndInsertSql(trx, {
    userId: posting.userId,
    reference: posting.reference,
    amount: posting.amount,
    reason: posting.reason,
    inboxEventId: posting.inboxEventId ?? null,
    handsOff: outbox.handsOff,
    lowBalanceThreshold: outbox.lowBalanceThreshold,
    // The expiry sweeper's entry is announced as wallet.credits_expired (with its lot), not wallet.debited.
    expiredLotId: posting.lots.kind === 'expire' ? posting.lots.lotId : null,
    lotCategory: credit ? credit.category : null,
    ...expiry,
    lotRolloverMax: credit?.rolloverMax ?? 0,
  });
  const row = rows.rows[0];
  if (!row) return undefined;
  const { kind, wallet_balance: balance, app_webhook_message_ids: messageIds } = row;
  if (kind === 'none') return { kind, balance };
  // The entry's columns by name (not a rest copy of the row: that is a slow copy of a wide object).
  const entry = {
    id: row.id,
    user_id: row.user_id,
    reference: row.reference,
    amount: row.amount,
    balance_before: row.balance_before,
    balance_after: row.balance_after,
    reason: row.reason,
    inbox_event_id: row.inbox_event_id,
    created_at: row.created_at,
  } as LedgerEntryRow;
  if (kind === 'existing') return { kind, entry };
  // int8[] comes back as strings (the pool's int8 parser covers scalars only); ids stay far below 2^53.
  return {
    kind,
    entry,
    messageIds: (messageIds ?? []).map(Number),
    lots: { matchBalance: row.lots_match === true, creditLotCreated: row.lot_id !== null },
  };
}

/** A credit's LotExpiry as the statement's three slots (the same meaning as lots.ts's expiryOf). */
function lotExpirySlots(expiry: LotExpiry): {
  lotExpiresAt: Date | null;
  lotMonths: number | null;
  lotAfter: Date | null;
} {
  if (expiry === null || expiry instanceof Date) return { lotExpiresAt: expiry, lotMonths: null, lotAfter: null };
  return { lotExpiresAt: null, lotMonths: expiry.months, lotAfter: expiry.after === 'now' ? null : expiry.after };
}

function alreadyPosted(entry: LedgerEntryRow, posting: LedgerPosting): PostLedgerEntryResult {
  if (entry.user_id !== posting.userId || entry.amount !== posting.amount) {
    throw new LedgerReferenceConflictError(
      posting.reference,
      { userId: entry.user_id, amount: entry.amount },
      { userId: posting.userId, amount: posting.amount },
    );
  }
  return { kind: 'already-posted', entry };
}

function findEntryByReference(trx: Transaction<DB>, reference: string): Promise<LedgerEntryRow | undefined> {
  return trx.selectFrom('ledger_entries').selectAll().where('reference', '=', reference).executeTakeFirst();
}

type LockedInsertRow = {
  kind: 'posted' | 'existing' | 'none';
  wallet_balance: number;
  app_webhook_message_ids: string[] | null;
  lots_match: boolean | null;
  lot_id: string | null;
} & {
  [K in keyof LedgerEntryRow]: LedgerEntryRow[K] | null;
};

/** lockWalletAndInsert's statement, compiled once (db/precompiled-sql.ts): one per posting on the hot path. */
const lockWalletAndInsertSql = precompiledSql<
  {
    userId: string;
    reference: string;
    amount: number;
    reason: string;
    inboxEventId: number | null;
    handsOff: boolean;
    lowBalanceThreshold: number | undefined;
    expiredLotId: number | null;
    /** A credit's lot (null for any other movement): created by the statement when the lots match. */
    lotCategory: string | null;
    lotExpiresAt: Date | null;
    lotMonths: number | null;
    lotAfter: Date | null;
    lotRolloverMax: number;
  },
  LockedInsertRow
>(
  // `lots_match`: the wallet's lots held exactly its balance before this entry (LotsBeforeEntry
  // says why the statement's snapshot can tell); a credit's lot is then inserted here too.
  (s) => sql`
    WITH wallet AS MATERIALIZED (
      SELECT balance, xmin AS version FROM wallets WHERE user_id = ${s.userId} FOR UPDATE),
    snapshot_wallet AS MATERIALIZED (
      SELECT xmin AS version FROM wallets WHERE user_id = ${s.userId}),
    lots AS MATERIALIZED (
      SELECT (w.version = sw.version
              AND w.balance = (SELECT coalesce(sum(remaining), 0) FROM credit_lots
                                WHERE user_id = ${s.userId} AND remaining > 0)) AS lots_match
        FROM wallet w, snapshot_wallet sw),
    existing AS MATERIALIZED (
      SELECT id, user_id, reference, amount, balance_before, balance_after, reason, inbox_event_id, created_at
        FROM ledger_entries WHERE reference = ${s.reference}),
    entry AS (
      INSERT INTO ledger_entries (user_id, reference, amount, balance_before, balance_after, reason, inbox_event_id)
      SELECT ${s.userId}, ${s.reference}, ${s.amount}, w.balance, w.balance + ${s.amount}, ${s.reason},
             ${s.inboxEventId}
        FROM wallet w
       WHERE w.balance + ${s.amount} >= 0 AND NOT EXISTS (SELECT 1 FROM existing)
      ON CONFLICT (reference) DO NOTHING
      RETURNING *),
    ${ledgerEntryMessagesCte({ handsOff: s.handsOff, lowBalanceThreshold: s.lowBalanceThreshold }, s.expiredLotId)},
    lot AS (
      INSERT INTO credit_lots (user_id, category, source, amount, remaining, expires_at, rollover_max)
      SELECT e.user_id, ${s.lotCategory}::text, e.reference, e.amount, e.amount,
             CASE WHEN ${s.lotMonths}::int IS NULL THEN ${s.lotExpiresAt}::timestamptz
                  ELSE coalesce(${s.lotAfter}::timestamptz, now()) + make_interval(months => ${s.lotMonths}::int) END,
             ${s.lotRolloverMax}::int
        FROM entry e, lots l
       WHERE ${s.lotCategory}::text IS NOT NULL AND l.lots_match
      RETURNING id)
    SELECT 'posted' AS kind, w.balance AS wallet_balance, e.id, e.user_id, e.reference, e.amount,
           e.balance_before, e.balance_after, e.reason, e.inbox_event_id, e.created_at,
           (SELECT array_agg(id ORDER BY id) FROM entry_messages) AS app_webhook_message_ids,
           (SELECT lots_match FROM lots) AS lots_match, (SELECT id FROM lot) AS lot_id
      FROM wallet w, entry e
    UNION ALL
    SELECT 'existing', w.balance, x.id, x.user_id, x.reference, x.amount, x.balance_before, x.balance_after,
           x.reason, x.inbox_event_id, x.created_at, NULL, NULL, NULL
      FROM wallet w, existing x
    UNION ALL
    SELECT 'none', w.balance, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL
      FROM wallet w
     WHERE NOT EXISTS (SELECT 1 FROM entry) AND NOT EXISTS (SELECT 1 FROM existing)`,
);
