import { sql, type Transaction } from 'kysely';
import type { DB, LedgerEntryRow } from '../db/schema';
import { InsufficientBalanceError, LedgerReferenceConflictError } from '../errors';
import { transactionOutbox } from '../outbox/app-webhook-outbox';
import { ensureWallet } from './ensure-wallet';
import { ledgerEntryMessagesCte } from './ledger-entry-messages';

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
}

export type PostLedgerEntryResult =
  | { kind: 'posted'; entry: LedgerEntryRow }
  | { kind: 'already-posted'; entry: LedgerEntryRow };

/**
 * Moves a wallet's balance by one ledger row, inside the caller's transaction.
 *
 * Invariants: the wallet row is locked first, so balance_before is the balance every concurrent
 * writer sees; the insert uses ON CONFLICT (reference) DO NOTHING, so a second posting with the
 * same reference (another replica, a replay, a retried job) changes nothing and returns the
 * first entry as `already-posted`. The database trigger moves the cached wallet balance to
 * balance_after. The same statement writes the entry's app webhook messages (wallet.credited or
 * wallet.debited, and wallet.balance_low on a crossing of the outbox's threshold): only for an
 * entry it posts, never for `already-posted`. `trx` must have been opened with the process's
 * outbox (inOutboxTransaction; OutboxNotOpenError otherwise), which hands them off after commit.
 *
 * Idempotent by reference. Throws LedgerReferenceConflictError when the reference already posts
 * a different user or amount (never a silent "already posted"), InsufficientBalanceError when a
 * debit would go below zero, and RangeError for a zero or non-integer amount.
 */
export async function postLedgerEntry(trx: Transaction<DB>, posting: LedgerPosting): Promise<PostLedgerEntryResult> {
  if (!Number.isSafeInteger(posting.amount) || posting.amount === 0) {
    throw new RangeError(`ledger amount must be a non-zero whole number of tokens, got ${posting.amount}`);
  }
  const outbox = transactionOutbox(trx);
  // One round trip in the common case: lock the wallet and look the reference up together. A
  // wallet that does not exist yet is created, then locked.
  let locked = await lockWalletAndFindReference(trx, posting);
  if (!locked) {
    await ensureWallet(trx, posting.userId);
    locked = await lockWalletAndFindReference(trx, posting);
    if (!locked) throw new Error(`wallet ${posting.userId} was created but cannot be locked`);
  }
  const { wallet, existing } = locked;
  if (existing) return alreadyPosted(existing, posting);

  const balanceAfter = wallet.balance + posting.amount;
  if (balanceAfter < 0) throw new InsufficientBalanceError(posting.userId, wallet.balance, -posting.amount);

  // The entry and its app webhook messages in one statement: a message exists only for an entry
  // this statement inserted, and costs no round trip of its own (nor do their ids, read back for
  // the hand-off after commit).
  const inserted = (
    await sql<LedgerEntryRow & { app_webhook_message_ids: string[] | null }>`
      WITH entry AS (
        INSERT INTO ledger_entries (user_id, reference, amount, balance_before, balance_after, reason, inbox_event_id)
        VALUES (${posting.userId}, ${posting.reference}, ${posting.amount}, ${wallet.balance}, ${balanceAfter},
                ${posting.reason}, ${posting.inboxEventId ?? null})
        ON CONFLICT (reference) DO NOTHING
        RETURNING *),
      ${ledgerEntryMessagesCte(outbox)}
      SELECT entry.*, (SELECT array_agg(id ORDER BY id) FROM entry_messages) AS app_webhook_message_ids
        FROM entry`.execute(trx)
  ).rows[0];
  if (inserted) {
    const { app_webhook_message_ids: messageIds, ...entry } = inserted;
    // int8[] comes back as strings (the pool's int8 parser covers scalars only); ids stay far below 2^53.
    outbox.written((messageIds ?? []).map(Number));
    return { kind: 'posted', entry };
  }

  // Another transaction committed the same reference (for another wallet) after our look-up.
  const winner = await findEntryByReference(trx, posting.reference);
  if (!winner) throw new Error(`ledger reference ${posting.reference} conflicted but cannot be read`);
  return alreadyPosted(winner, posting);
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

/**
 * Locks the wallet (FOR UPDATE, so balance_before is what every concurrent writer sees) and reads
 * any entry already posted under the reference, in one statement. Undefined when the wallet does
 * not exist.
 */
async function lockWalletAndFindReference(
  trx: Transaction<DB>,
  posting: LedgerPosting,
): Promise<{ wallet: { balance: number }; existing: LedgerEntryRow | undefined } | undefined> {
  const rows = await sql<{ wallet_balance: number } & { [K in keyof LedgerEntryRow]: LedgerEntryRow[K] | null }>`
    SELECT w.balance AS wallet_balance, l.id, l.user_id, l.reference, l.amount, l.balance_before,
           l.balance_after, l.reason, l.inbox_event_id, l.created_at
      FROM wallets w
      LEFT JOIN ledger_entries l ON l.reference = ${posting.reference}
     WHERE w.user_id = ${posting.userId}
       FOR UPDATE OF w`.execute(trx);
  const row = rows.rows[0];
  if (!row) return undefined;
  const { wallet_balance: balance, ...entry } = row;
  return { wallet: { balance }, existing: entry.id === null ? undefined : (entry as LedgerEntryRow) };
}

function findEntryByReference(trx: Transaction<DB>, reference: string): Promise<LedgerEntryRow | undefined> {
  return trx.selectFrom('ledger_entries').selectAll().where('reference', '=', reference).executeTakeFirst();
}
