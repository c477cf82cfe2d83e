import { sql } from 'kysely';
import type { UnitOfWorkOutbox } from '../unit-of-work/unit-of-work';

/**
 * The part of postLedgerEntry's insert that writes the entries' messages, as a CTE over the CTEs
 * `entry` (the ledger rows that statement inserted: none when the reference was already posted,
 * so a replay writes no message) and `input` (the postings, one row per reference, with the
 * expired lot of an expiry entry in `expired_lot_id`). One `wallet.credited` or `wallet.debited`
 * per entry (an expiry entry: `wallet.credits_expired`, with its lot; a posting's `message_data`,
 * a usage's feature fields, added to its data), and a `wallet.balance_low`
 * after it when the entry takes the balance from at least the outbox's threshold to below it.
 * Returns each message's id and user (the statement reads them from `entry_messages`). The caller
 * holds the wallets' locks (postLedgerEntry's statement takes them before the insert).
 */
export function ledgerEntryMessagesCte(outbox: Pick<UnitOfWorkOutbox, 'lowBalanceThreshold' | 'handsOff'>) {
  const limit = outbox.lowBalanceThreshold ?? null;
  // guard: wallet-messages-written
  // guard: wallet-payload-reason
  return sql`entry_messages AS (
    INSERT INTO app_webhook_messages (user_id, type, ledger_entry_id, data, created_at, enqueued_at)
    SELECT e.user_id, m.type, m.ledger_entry_id, m.data, e.created_at, CASE WHEN ${outbox.handsOff}::boolean THEN now() END
      FROM entry e
      JOIN input i ON i.reference = e.reference
     CROSS JOIN LATERAL (VALUES
       (1, CASE WHEN i.expired_lot_id IS NOT NULL THEN 'wallet.credits_expired'
                WHEN e.amount > 0 THEN 'wallet.credited' ELSE 'wallet.debited' END, e.id,
        CASE WHEN i.expired_lot_id IS NOT NULL THEN
          jsonb_build_object('userId', e.user_id, 'lotId', i.expired_lot_id, 'amount', e.amount,
                             'balanceAfter', e.balance_after, 'reference', e.reference)
        ELSE
          jsonb_build_object('userId', e.user_id, 'reference', e.reference, 'amount', e.amount,
                             'balanceBefore', e.balance_before, 'balanceAfter', e.balance_after,
                             'reason', e.reason,
                             'createdAt', to_char(e.created_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"'))
          || coalesce(i.message_data, '{}'::jsonb)
        END),
       (2, 'wallet.balance_low', NULL::bigint,
        jsonb_build_object('userId', e.user_id, 'balance', e.balance_after, 'threshold', ${limit}::bigint))
     ) AS m(ord, type, ledger_entry_id, data)
     WHERE m.ord = 1
        OR (${limit}::bigint IS NOT NULL AND e.balance_before >= ${limit}::bigint AND e.balance_after < ${limit}::bigint)
     ORDER BY e.id, m.ord
    RETURNING id, user_id)`;
}
