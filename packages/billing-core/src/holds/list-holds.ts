import { type Kysely, sql } from 'kysely';
import type { DB, HoldRow } from '../db/schema';
import { activeHold } from '../ledger/held-tokens';

/** What a hold shows (the API, the support view, the console, `tally user`). */
export type HoldViewStatus = 'held' | 'captured' | 'released' | 'expired';

export interface HoldView {
  id: string;
  userId: string;
  reference: string;
  amount: number;
  reason: string;
  /** `expired`: stored `held` but past expiresAt by the database clock (it no longer counts). */
  status: HoldViewStatus;
  expiresAt: Date;
  /** What the capture debited (null unless captured). */
  captured: number | null;
  /** What the capture or release freed (null while held, and for an expired hold). */
  released: number | null;
  /** The capture's ledger reference, `hold:{id}:capture` (null unless captured). */
  ledgerReference: string | null;
  createdAt: Date;
  /** When the hold was captured or released (or an expired one settled); null while open. */
  settledAt: Date | null;
}

/** The columns a view is made of, with `expired` decided by the database clock. */
export const holdViewColumns = sql<HoldRow & { view_status: HoldViewStatus }>`
  h.*, CASE WHEN h.status = 'held' AND h.expires_at <= now() THEN 'expired' ELSE h.status END AS view_status`;

export function toHoldView(row: HoldRow & { view_status: HoldViewStatus }): HoldView {
  return {
    id: row.id,
    userId: row.user_id,
    reference: row.reference,
    amount: Number(row.amount),
    reason: row.reason,
    status: row.view_status,
    expiresAt: new Date(row.expires_at),
    captured: row.captured === null ? null : Number(row.captured),
    released: row.released === null ? null : Number(row.released),
    ledgerReference: row.ledger_reference,
    createdAt: new Date(row.created_at),
    settledAt: row.settled_at === null ? null : new Date(row.settled_at),
  };
}

/** One hold of a user (another user's hold is not found). */
export async function findHold(db: Kysely<DB>, userId: string, holdId: string): Promise<HoldView | undefined> {
  const rows = await sql<HoldRow & { view_status: HoldViewStatus }>`
    SELECT ${holdViewColumns} FROM holds h WHERE h.id = ${holdId} AND h.user_id = ${userId}`.execute(db);
  const row = rows.rows[0];
  return row ? toHoldView(row) : undefined;
}

/**
 * A user's holds, newest first, at most `limit` (default 100). `status: 'held'`: the active ones
 * only (read from the open-holds index, not the user's history); another status: those of it.
 */
export async function listHolds(
  db: Kysely<DB>,
  userId: string,
  options: { status?: HoldViewStatus | undefined; limit?: number | undefined } = {},
): Promise<HoldView[]> {
  const limit = options.limit ?? 100;
  const filter =
    options.status === undefined
      ? sql`TRUE`
      : options.status === 'held'
        ? activeHold('h')
        : options.status === 'expired'
          ? sql`(h.status = 'held' AND h.expires_at <= now())`
          : sql`h.status = ${options.status}`;
  const rows = await sql<HoldRow & { view_status: HoldViewStatus }>`
    SELECT ${holdViewColumns} FROM holds h
     WHERE h.user_id = ${userId} AND ${filter}
     ORDER BY h.created_at DESC, h.id
     LIMIT ${limit}`.execute(db);
  return rows.rows.map(toHoldView);
}
