import { precompiledSql, sqlBatchArray } from '@tally/platform/db';
import { type RawBuilder, sql, type Transaction } from 'kysely';
import type { DB, LedgerEntryRow } from '../db/schema';
import type { UnitOfWork, UnitOfWorkOutbox } from '../unit-of-work/unit-of-work';
import { ledgerEntryMessagesCte } from './ledger-entry-messages';
import type { LedgerPosting } from './ledger-posting';
import { knownDrawsOf, type LotExpiry, type LotsBeforeEntry } from './lots';

/**
 * The posting statement (postingStatement) and its two compiled forms: one posting
 * (lockWalletAndInsert, postLedgerEntry) and several on distinct wallets (lockWalletsAndInsert,
 * postLedgerEntries). What a posting's answer means is read in posting-answers.ts.
 */

export type LockedInsert =
  /**
   * The entry this statement inserted, the ids of its messages (for the hand-off after commit),
   * and what the statement already did to the wallet's lots (LotsBeforeEntry).
   */
  | { kind: 'posted'; entry: LedgerEntryRow; messageIds: number[]; lots: LotsBeforeEntry; walletDebt: number }
  /** An entry already posted under the reference: nothing was inserted. */
  | { kind: 'existing'; entry: LedgerEntryRow }
  /** Nothing inserted and nothing found: the balance would go below zero, or a concurrent insert won. */
  | { kind: 'none'; balance: number };

/**
 * The posting statement (postingStatement) for one posting: undefined when the wallet does not
 * exist.
 */
export async function lockWalletAndInsert(
  trx: Transaction<DB>,
  outbox: UnitOfWorkOutbox,
  posting: LedgerPosting,
): Promise<LockedInsert | undefined> {
  const slots = {
    ...postingSlotsOf(posting),
    handsOff: outbox.handsOff,
    lowBalanceThreshold: outbox.lowBalanceThreshold,
  };
  const draws = knownDrawsOf(posting.lots, -posting.amount);
  const { rows } =
    draws === null
      ? await lockWalletAndInsertSql(trx, slots)
      : await lockWalletAndInsertDrawingSql(trx, {
          ...slots,
          drawLotIds: draws.map((draw) => draw.lotId),
          drawAmounts: draws.map((draw) => draw.amount),
        });
  const row = rows[0];
  return row === undefined ? undefined : lockedInsertOf(row, draws !== null);
}

/**
 * The posting statement for several postings on distinct wallets and references: the outcome of
 * each, by position (undefined where the wallet does not exist).
 */
export async function lockWalletsAndInsert(
  uow: UnitOfWork,
  items: readonly { posting: LedgerPosting }[],
): Promise<(LockedInsert | undefined)[]> {
  const slots = items.map(({ posting }) => postingSlotsOf(posting));
  const column = <K extends keyof PostingSlots>(key: K): PostingSlots[K][] => slots.map((slot) => slot[key]);
  const known = items.map(({ posting }) => knownDrawsOf(posting.lots, -posting.amount));
  const arrays = {
    userId: column('userId'),
    reference: column('reference'),
    amount: column('amount'),
    reason: column('reason'),
    inboxEventId: column('inboxEventId'),
    messageData: column('messageData'),
    countsAsSpent: column('countsAsSpent'),
    expiredLotId: column('expiredLotId'),
    lotCategory: column('lotCategory'),
    lotExpiresAt: column('lotExpiresAt'),
    lotMonths: column('lotMonths'),
    lotAfter: column('lotAfter'),
    lotRolloverMax: column('lotRolloverMax'),
    handsOff: uow.outbox.handsOff,
    lowBalanceThreshold: uow.outbox.lowBalanceThreshold,
  };
  const flat = known.flatMap((draws, posting) =>
    (draws ?? []).map((draw, order) => ({ posting, order, lotId: draw.lotId, amount: draw.amount })),
  );
  const { rows } = known.every((draws) => draws === null)
    ? await lockWalletsAndInsertSql(uow.trx, arrays)
    : await lockWalletsAndInsertDrawingSql(uow.trx, {
        ...arrays,
        drawPostings: flat.map((draw) => draw.posting),
        drawOrders: flat.map((draw) => draw.order),
        drawLotIds: flat.map((draw) => draw.lotId),
        drawAmounts: flat.map((draw) => draw.amount),
      });
  const outcomes = new Array<LockedInsert | undefined>(items.length);
  for (const row of rows) outcomes[row.position] = lockedInsertOf(row, known[row.position] !== null);
  return outcomes;
}

/**
 * A row of the posting statement's answer, as postLedgerEntry reads it. `knownDraws`: the posting's
 * draws were given to the statement, which recorded them when the lots matched.
 */
function lockedInsertOf(row: LockedInsertRow, knownDraws: boolean): LockedInsert {
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
    lots: {
      matchBalance: row.lots_match === true,
      creditLotCreated: row.lot_id !== null,
      drawsRecorded: knownDraws && row.lots_match === true,
    },
    walletDebt: Number(row.wallet_debt ?? 0),
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
type LockedInsertRow = {
  kind: 'posted' | 'existing' | 'none';
  /** The posting's position in the statement's input (0 for the statement of one). */
  position: number;
  wallet_balance: number;
  /** The wallet's debt as locked (a posted entry's row only). */
  wallet_debt: number | null;
  app_webhook_message_ids: string[] | null;
  lots_match: boolean | null;
  lot_id: string | null;
} & {
  [K in keyof LedgerEntryRow]: LedgerEntryRow[K] | null;
};

/** One posting as the posting statement's slots: the entry's columns, its expired lot and its credit's lot (postingSlotsOf). */
interface PostingSlots {
  userId: string;
  reference: string;
  amount: number;
  reason: string;
  inboxEventId: number | null;
  /** The posting's messageData as JSON text (null: none). */
  messageData: string | null;
  /** A spend or a capture: counted in spend_days, what the spend limits read (docs/spend-limits.md). */
  countsAsSpent: boolean;
  /** The expiry sweeper's entry is announced as wallet.credits_expired (with its lot), not wallet.debited. */
  expiredLotId: number | null;
  /** A credit's lot (null for any other movement): created by the statement when the lots match. */
  lotCategory: string | null;
  lotExpiresAt: Date | null;
  lotMonths: number | null;
  lotAfter: Date | null;
  lotRolloverMax: number;
}

/** The unit's outbox settings, the same for every posting of a statement. */
interface OutboxSlots {
  handsOff: boolean;
  lowBalanceThreshold: number | undefined;
}

function postingSlotsOf(posting: LedgerPosting): PostingSlots {
  const credit = posting.lots.kind === 'credit' ? posting.lots : null;
  const expiry = credit ? lotExpirySlots(credit.expiresAt) : { lotExpiresAt: null, lotMonths: null, lotAfter: null };
  return {
    userId: posting.userId,
    reference: posting.reference,
    amount: posting.amount,
    reason: posting.reason,
    inboxEventId: posting.inboxEventId ?? null,
    messageData: posting.messageData === undefined ? null : JSON.stringify(posting.messageData),
    // guard: spend-counted
    // guard: capture-counted
    countsAsSpent: posting.lots.kind === 'spend' || posting.lots.kind === 'capture',
    // guard: expiry-entry-message
    expiredLotId: posting.lots.kind === 'expire' ? posting.lots.lotId : null,
    lotCategory: credit ? credit.category : null,
    ...expiry,
    lotRolloverMax: credit?.rolloverMax ?? 0,
  };
}

/**
 * The posting statement over `input`, a CTE of postings (one row per posting, at most one per
 * wallet and per reference; columns user_id, reference, amount, reason, inbox_event_id,
 * counts_as_spent, expired_lot_id, the lot's columns and `position`). Written once for both
 * statements that run it: one posting (`lockWalletAndInsertSql`, its values as parameters) and
 * several on distinct wallets (`lockWalletsAndInsertSql`, its values as arrays), so the two
 * cannot drift apart.
 *
 * Per posting, what postLedgerEntry documents: the wallet locked (FOR UPDATE, in user order) and
 * read at its latest version; `lots_match` when the wallet row is also the snapshot's version and
 * the snapshot's lots sum to its balance (LotsBeforeEntry); any entry already posted under the
 * reference read; and only when there is none and the balance stays at zero or above, the entry
 * inserted under ON CONFLICT (reference) DO NOTHING, with its app webhook messages, for a spend or
 * a capture its tokens added to the user's spend_days counter of the entry's UTC day (what the
 * spend limits read, under the same wallet lock: no statement of its own) and, for a credit whose
 * wallet's lots match, its lot. One answer row per posting whose wallet exists:
 * `posted`, `existing` or `none`. The ledger trigger moves each wallet to its entry's
 * balance_after at the end of the statement (one entry per wallet, so no entry of the statement
 * depends on another's balance).
 *
 * The wallets and the entries already posted are found by a probe of their key per posting (a
 * LATERAL subquery the planner cannot fold into a join), never by a join it may plan as a scan:
 * a prepared statement keeps the plan it made first, and one made while the tables were small
 * would scan them as they grow (docs/scaling.md#prepared-statements). The wallets are locked one
 * probe at a time, in user order.
 */
function postingStatement(statement: {
  /** The postings: a query with input's columns. */
  input: RawBuilder<unknown>;
  /** Several postings: wallets locked in user order, entries and lots inserted in input order. */
  many: boolean;
  outbox: { readonly [K in keyof OutboxSlots]: OutboxSlots[K] };
  /**
   * Draws known before the posting (a capture's, from its hold's lots: knownDrawsOf), a query with
   * columns `posting` (its input's position), `lot_id`, `amount` and `draw_order`; null for none.
   */
  knownDraws: RawBuilder<unknown> | null;
}) {
  const { input, many, outbox, knownDraws } = statement;
  const orderBy = (order: RawBuilder<unknown>) => (many ? sql`ORDER BY ${order}` : sql``);
  // guard: posting-lot-join
  // guard: posting-lots-sum
  // guard: posting-credit-lot-match
  // guard: posting-snapshot-wallet-probe
  // guard: posting-existing-entry-probe
  return sql`
    WITH input AS ${many ? sql`MATERIALIZED` : sql`NOT MATERIALIZED`} (${input}),
    wallet AS MATERIALIZED (
      SELECT w.user_id, w.balance, w.debt, w.version
        FROM (SELECT user_id FROM input ${orderBy(sql`user_id`)}) AS k,
             LATERAL (SELECT x.user_id, x.balance, x.debt, x.xmin AS version FROM wallets x
                       WHERE x.user_id = k.user_id FOR UPDATE) AS w),
    snapshot_wallet AS MATERIALIZED (
      SELECT k.user_id, w.version
        FROM input AS k, LATERAL (SELECT x.xmin AS version FROM wallets x WHERE x.user_id = k.user_id LIMIT 1) AS w),
    lots AS MATERIALIZED (
      SELECT w.user_id,
             (w.version = sw.version
              AND w.balance = (SELECT coalesce(sum(remaining), 0) FROM credit_lots c
                                WHERE c.user_id = w.user_id AND c.remaining > 0)) AS lots_match
        FROM wallet w JOIN snapshot_wallet sw ON sw.user_id = w.user_id),
    existing AS MATERIALIZED (
      SELECT x.id, x.user_id, x.reference, x.amount, x.balance_before, x.balance_after, x.reason, x.inbox_event_id,
             x.created_at
        FROM input AS k,
             LATERAL (SELECT * FROM ledger_entries e WHERE e.reference = k.reference LIMIT 1) AS x),
    entry AS (
      INSERT INTO ledger_entries (user_id, reference, amount, balance_before, balance_after, reason, inbox_event_id)
      SELECT i.user_id, i.reference, i.amount, w.balance, w.balance + i.amount, i.reason, i.inbox_event_id
        FROM input i JOIN wallet w ON w.user_id = i.user_id
       WHERE w.balance + i.amount >= 0 AND NOT EXISTS (SELECT 1 FROM existing x WHERE x.reference = i.reference)
       ${orderBy(sql`i.position`)}
      ON CONFLICT (reference) DO NOTHING
      RETURNING *),
    ${ledgerEntryMessagesCte(outbox)},
    spent AS (
      INSERT INTO spend_days AS d (user_id, day, spent)
      SELECT e.user_id, (e.created_at AT TIME ZONE 'UTC')::date, -e.amount
        FROM entry e JOIN input i ON e.reference = i.reference
       WHERE i.counts_as_spent
      ON CONFLICT (user_id, day) DO UPDATE SET spent = d.spent + EXCLUDED.spent),
    lot AS (
      INSERT INTO credit_lots (user_id, category, source, amount, remaining, expires_at, rollover_max)
      SELECT e.user_id, i.lot_category, e.reference, e.amount, e.amount,
             CASE WHEN i.lot_months IS NULL THEN i.lot_expires_at
                  ELSE coalesce(i.lot_after, now()) + make_interval(months => i.lot_months) END,
             i.lot_rollover_max
        FROM entry e JOIN input i ON i.reference = e.reference JOIN lots l ON l.user_id = e.user_id
       WHERE i.lot_category IS NOT NULL AND l.lots_match
       ${orderBy(sql`e.id`)}
      RETURNING id, source)
    ${
      knownDraws === null
        ? sql``
        : // Only where the lots matched the balance (no gap to close first): the known draws move
          // their lots and are recorded as the entry's, as applyLotMovement would. Each lot found
          // by a probe of its key, then updated by its row's address (under the wallet lock no
          // other writer moves it; a lot missed would fail the wallet's sum check at commit): a
          // join by id was planned as a scan of every lot while credit_lots looked small (0.1 to
          // 0.2 ms a capture over the bench's 1,000 lots), and a generic plan keeps that plan.
          // guard: posting-known-draws-match
          sql`, known_draws AS MATERIALIZED (
      SELECT e.id AS entry_id, k.lot_id, k.amount, k.draw_order
        FROM (${knownDraws}) AS k JOIN input i ON i.position = k.posting
        JOIN entry e ON e.reference = i.reference JOIN lots l ON l.user_id = e.user_id
       WHERE l.lots_match),
    drawn AS (
      UPDATE credit_lots c SET remaining = c.remaining - k.amount
        FROM known_draws k, LATERAL (SELECT x.ctid AS address FROM credit_lots x WHERE x.id = k.lot_id LIMIT 1) AS p
       WHERE c.ctid = p.address),
    recorded AS (
      INSERT INTO ledger_draws (ledger_entry_id, lot_id, amount, position)
      SELECT entry_id, lot_id, amount, draw_order FROM known_draws ${orderBy(sql`entry_id, draw_order`)})`
    }
    SELECT 'posted' AS kind, i.position, w.balance AS wallet_balance, e.id, e.user_id, e.reference, e.amount,
           e.balance_before, e.balance_after, e.reason, e.inbox_event_id, e.created_at,
           (SELECT array_agg(m.id ORDER BY m.id) FROM entry_messages m WHERE m.user_id = e.user_id)
             AS app_webhook_message_ids,
           l.lots_match, (SELECT id FROM lot WHERE lot.source = e.reference) AS lot_id, w.debt AS wallet_debt
      FROM input i JOIN wallet w ON w.user_id = i.user_id JOIN entry e ON e.reference = i.reference
      JOIN lots l ON l.user_id = i.user_id
    UNION ALL
    SELECT 'existing', i.position, w.balance, x.id, x.user_id, x.reference, x.amount, x.balance_before,
           x.balance_after, x.reason, x.inbox_event_id, x.created_at, NULL, NULL, NULL, NULL
      FROM input i JOIN wallet w ON w.user_id = i.user_id JOIN existing x ON x.reference = i.reference
    UNION ALL
    SELECT 'none', i.position, w.balance, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL
      FROM input i JOIN wallet w ON w.user_id = i.user_id
     WHERE NOT EXISTS (SELECT 1 FROM entry e WHERE e.reference = i.reference)
       AND NOT EXISTS (SELECT 1 FROM existing x WHERE x.reference = i.reference)`;
}

/** One posting's input (the statement's `input` CTE), from its slots. */
function oneInput(s: { readonly [K in keyof PostingSlots]: PostingSlots[K] }) {
  return sql`SELECT ${s.userId}::text AS user_id, ${s.reference}::text AS reference, ${s.amount}::bigint AS amount,
               ${s.reason}::text AS reason, ${s.inboxEventId}::bigint AS inbox_event_id,
               ${s.messageData}::jsonb AS message_data, ${s.countsAsSpent}::boolean AS counts_as_spent,
               ${s.expiredLotId}::bigint AS expired_lot_id, ${s.lotCategory}::text AS lot_category,
               ${s.lotExpiresAt}::timestamptz AS lot_expires_at, ${s.lotMonths}::int AS lot_months,
               ${s.lotAfter}::timestamptz AS lot_after, ${s.lotRolloverMax}::int AS lot_rollover_max,
               0 AS position`;
}

/** The statement of one posting over its slots, with its draws when known before it (a capture). */
function onePostingStatement(
  s: { readonly [K in keyof (PostingSlots & OutboxSlots)]: (PostingSlots & OutboxSlots)[K] },
  knownDraws: RawBuilder<unknown> | null,
) {
  return postingStatement({
    input: oneInput(s),
    many: false,
    outbox: s,
    knownDraws,
  });
}

/** The statement for one posting, compiled once (platform's precompiled-sql.ts): one per posting on the hot path. */
const lockWalletAndInsertSql = precompiledSql<PostingSlots & OutboxSlots, LockedInsertRow>((s) =>
  onePostingStatement(s, null),
);

/** A posting's draws known before it (knownDrawsOf), in their order: the lots and what each gives. */
interface KnownDrawSlots {
  drawLotIds: number[];
  drawAmounts: number[];
}

/** lockWalletAndInsertSql for a posting whose draws are known (a capture), compiled once. */
const lockWalletAndInsertDrawingSql = precompiledSql<PostingSlots & OutboxSlots & KnownDrawSlots, LockedInsertRow>(
  (s) =>
    onePostingStatement(
      s,
      sql`SELECT 0 AS posting, lot_id, amount, (draw_order - 1)::int AS draw_order
                        FROM unnest(${s.drawLotIds}::bigint[], ${s.drawAmounts}::bigint[])
                             WITH ORDINALITY AS d (lot_id, amount, draw_order)`,
    ),
);

/** The postings' columns as the arrays of lockWalletsAndInsertSql, in input order. */
type PostingArrays = { [K in keyof PostingSlots]: PostingSlots[K][] };

/**
 * Several postings' input (the statement's `input` CTE), from their arrays, their length hidden
 * from the planner (sqlBatchArray): its probes cost per posting, so a custom plan that saw a small
 * batch always looked cheaper than the generic one, and the statement was planned at every
 * execution (0.3 ms a capture's batch in the bench's holds phase).
 */
function manyInput(s: { readonly [K in keyof PostingArrays]: PostingArrays[K] }) {
  return sql`SELECT user_id, reference, amount, reason, inbox_event_id, message_data, counts_as_spent, expired_lot_id,
               lot_category, lot_expires_at, lot_months, lot_after, lot_rollover_max, (position - 1)::int AS position
          FROM unnest(${sqlBatchArray(s.userId, 'text')}, ${sqlBatchArray(s.reference, 'text')},
                      ${sqlBatchArray(s.amount, 'bigint')}, ${sqlBatchArray(s.reason, 'text')},
                      ${sqlBatchArray(s.inboxEventId, 'bigint')}, ${sqlBatchArray(s.messageData, 'jsonb')},
                      ${sqlBatchArray(s.countsAsSpent, 'boolean')}, ${sqlBatchArray(s.expiredLotId, 'bigint')},
                      ${sqlBatchArray(s.lotCategory, 'text')}, ${sqlBatchArray(s.lotExpiresAt, 'timestamptz')},
                      ${sqlBatchArray(s.lotMonths, 'int')}, ${sqlBatchArray(s.lotAfter, 'timestamptz')},
                      ${sqlBatchArray(s.lotRolloverMax, 'int')})
               WITH ORDINALITY AS p (user_id, reference, amount, reason, inbox_event_id, message_data, counts_as_spent,
                                     expired_lot_id, lot_category, lot_expires_at, lot_months, lot_after,
                                     lot_rollover_max, position)`;
}

/** The statement for several postings on distinct wallets (postLedgerEntries), compiled once. */
const lockWalletsAndInsertSql = precompiledSql<PostingArrays & OutboxSlots, LockedInsertRow>((s) =>
  postingStatement({
    input: manyInput(s),
    many: true,
    outbox: s,
    knownDraws: null,
  }),
);

/** Several postings' known draws (knownDrawsOf), flattened: each draw's posting (its position), order, lot and amount. */
interface KnownDrawArrays {
  drawPostings: number[];
  drawOrders: number[];
  drawLotIds: number[];
  drawAmounts: number[];
}

/** lockWalletsAndInsertSql where some postings' draws are known (captures), compiled once. */
const lockWalletsAndInsertDrawingSql = precompiledSql<PostingArrays & OutboxSlots & KnownDrawArrays, LockedInsertRow>(
  (s) =>
    postingStatement({
      input: manyInput(s),
      many: true,
      outbox: s,
      // The draws' count hidden from the planner (sqlBatchArray): without it, this variant's custom
      // plans never give way to a generic one and it is planned at every execution.
      knownDraws: sql`SELECT posting, lot_id, amount, draw_order
                        FROM unnest(${sqlBatchArray(s.drawPostings, 'int')}, ${sqlBatchArray(s.drawLotIds, 'bigint')},
                                    ${sqlBatchArray(s.drawAmounts, 'bigint')}, ${sqlBatchArray(s.drawOrders, 'int')})
                             AS d (posting, lot_id, amount, draw_order)`,
    }),
);
