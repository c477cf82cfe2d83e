import { type Kysely, sql } from 'kysely';
import type { DB } from '../db/schema';
import { activeHold } from '../ledger/held-tokens';
import {
  type SpendLimitDefaults,
  type SpendLimitsView,
  type SpendRead,
  type SpendReadRow,
  spendLimitsViewOf,
  spendReadOf,
  spendReadSql,
} from './spend-limits';

/**
 * What a spend would find (without the wallet lock): what active holds reserve and the spend read
 * (spendReadSql), in one statement. `check` and the limits' reads use it.
 */
export async function readSpendState(db: Kysely<DB>, userId: string): Promise<{ held: number; read: SpendRead }> {
  const result = await sql<SpendReadRow & { held: number }>`
    SELECT sp.*, (SELECT coalesce(sum(h.amount), 0) FROM holds h WHERE h.user_id = ${userId} AND ${activeHold('h')})::bigint AS held
      FROM (${spendReadSql(userId)}) AS sp`.execute(db);
  const row = result.rows[0];
  if (!row) throw new Error(`the spend limits of ${userId} cannot be read`);
  return { held: Number(row.held), read: spendReadOf(row) };
}

/**
 * A user's spend limits as `GET /v1/users/{userId}/limits` answers them (docs/spend-limits.md):
 * each period's limit in force and where it comes from, what was spent in the current UTC day and
 * calendar month (the database clock), when each resets, and what active holds reserve.
 */
export async function readSpendLimits(
  db: Kysely<DB>,
  userId: string,
  defaults: SpendLimitDefaults,
): Promise<SpendLimitsView> {
  const { held, read } = await readSpendState(db, userId);
  return spendLimitsViewOf(userId, read, defaults, held);
}

/** A change of a user's own limits: a number sets it, null removes it (the default applies), absent leaves it. */
export interface SpendLimitsChange {
  daily?: number | null | undefined;
  monthly?: number | null | undefined;
}

/**
 * Sets a user's own limits (`PUT …/limits`, support's on the admin API, the console and the CLI)
 * and answers the limits as they are then. Idempotent: the same change again changes nothing. A
 * change that names neither period writes nothing. Takes a transaction to join one (support's
 * audited writes) or the database.
 */
export async function setSpendLimits(
  db: Kysely<DB>,
  userId: string,
  change: SpendLimitsChange,
  defaults: SpendLimitDefaults,
): Promise<SpendLimitsView> {
  const setDaily = change.daily !== undefined;
  const setMonthly = change.monthly !== undefined;
  if (setDaily || setMonthly) {
    await sql`
      INSERT INTO spend_limits AS l (user_id, daily, monthly)
      VALUES (${userId}, ${change.daily ?? null}::bigint, ${change.monthly ?? null}::bigint)
      ON CONFLICT (user_id) DO UPDATE
        SET daily = CASE WHEN ${setDaily} THEN EXCLUDED.daily ELSE l.daily END,
            monthly = CASE WHEN ${setMonthly} THEN EXCLUDED.monthly ELSE l.monthly END,
            updated_at = now()`.execute(db);
  }
  return readSpendLimits(db, userId, defaults);
}
