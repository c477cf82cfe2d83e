import { type RawBuilder, sql } from 'kysely';
import type { UserSql } from '../db/user-sql';

/**
 * SPEND_LIMIT_DAILY and SPEND_LIMIT_MONTHLY: the limits of a user without one of their own
 * (docs/spend-limits.md); null: none. Every spend use case takes them (a compile error to forget).
 */
export interface SpendLimitDefaults {
  daily: number | null;
  monthly: number | null;
}

export const noSpendLimits: SpendLimitDefaults = { daily: null, monthly: null };

/** A UTC day and a calendar month (UTC). */
export const spendPeriods = ['daily', 'monthly'] as const;
export type SpendPeriod = (typeof spendPeriods)[number];

/**
 * What a spend reads under the wallet lock (in lockWalletFunds' one read statement): the
 * database's UTC day, the user's own limits and what they spent in that day and its month.
 */
export interface SpendRead {
  /** `YYYY-MM-DD`: the UTC day of the database clock. */
  today: string;
  own: Record<SpendPeriod, number | null>;
  spent: Record<SpendPeriod, number>;
}

/** A spend a limit refuses (402 spend_limit_reached): nothing was spent. */
export interface SpendLimitRefusal {
  period: SpendPeriod;
  limit: number;
  /** Spent in the period (debits, usage, captures, studio debits; give-backs taken off). */
  spent: number;
  /** What the user's active holds reserve: it counts as spent until they end. */
  held: number;
  requested: number;
  resetsAt: string;
}

export interface SpendPeriodView {
  /** The limit in force; null: none. */
  limit: number | null;
  /** `user`: the user's own; `default`: SPEND_LIMIT_DAILY/MONTHLY; `none`: no limit. */
  source: 'user' | 'default' | 'none';
  spent: number;
  resetsAt: string;
}

export interface SpendLimitsView {
  userId: string;
  /** What active holds reserve: counted in both periods while they are active. */
  held: number;
  daily: SpendPeriodView;
  monthly: SpendPeriodView;
}

/** The row columns spendReadSql answers (prefixed: they sit beside a hold's columns in lockWalletFunds). */
export interface SpendReadRow {
  spend_today: string;
  spend_own_daily: number | null;
  spend_own_monthly: number | null;
  spend_spent_daily: number;
  spend_spent_monthly: number;
}

/**
 * One row: the database's UTC day, the user's own limits, and the tokens spent in that day and in
 * its month (the month is the sum of its days: at most 31 rows of spend_days' primary key).
 */
export function spendReadSql(userId: UserSql): RawBuilder<SpendReadRow> {
  return sql<SpendReadRow>`
    SELECT t.today::text AS spend_today, sl.daily AS spend_own_daily, sl.monthly AS spend_own_monthly,
           coalesce(s.day_spent, 0)::bigint AS spend_spent_daily, coalesce(s.month_spent, 0)::bigint AS spend_spent_monthly
      FROM (SELECT (now() AT TIME ZONE 'UTC')::date AS today) t
      LEFT JOIN spend_limits sl ON sl.user_id = ${userId}
      LEFT JOIN LATERAL (
        SELECT sum(d.spent) FILTER (WHERE d.day = t.today) AS day_spent, sum(d.spent) AS month_spent
          FROM spend_days d
         WHERE d.user_id = ${userId} AND d.day > t.today - extract(day FROM t.today)::int AND d.day <= t.today) s ON TRUE`;
}

export function spendReadOf(row: SpendReadRow): SpendRead {
  const orNull = (value: number | null) => (value === null ? null : Number(value));
  return {
    today: row.spend_today,
    own: { daily: orNull(row.spend_own_daily), monthly: orNull(row.spend_own_monthly) },
    spent: { daily: Number(row.spend_spent_daily), monthly: Number(row.spend_spent_monthly) },
  };
}

/** When a period that contains `today` ends: the next UTC midnight, or the first of the next month. */
export function resetsAtOf(period: SpendPeriod, today: string): string {
  const at = new Date(`${today}T00:00:00.000Z`);
  if (period === 'daily') at.setUTCDate(at.getUTCDate() + 1);
  else at.setUTCMonth(at.getUTCMonth() + 1, 1);
  return at.toISOString();
}

/** The limit in force for a period: the user's own, else the default, else none. */
function limitOf(read: SpendRead, defaults: SpendLimitDefaults, period: SpendPeriod) {
  const own = read.own[period];
  if (own !== null) return { limit: own, source: 'user' as const };
  const fallback = defaults[period];
  return fallback === null ? { limit: null, source: 'none' as const } : { limit: fallback, source: 'default' as const };
}

/**
 * The spend limit decision (docs/spend-limits.md), the one every spend asks (debits, usage, holds
 * of an amount or an estimate, studio debits), under the wallet lock, after its reference fence
 * (a retry of an applied reference never gets here) and before it spends: a spend of `amount` is
 * refused when what was spent in a period, plus what active holds reserve, plus `amount`, would
 * pass that period's limit. A spend of nothing (a free use) is never refused. Pure.
 */
export function spendLimitRefusal(
  read: SpendRead,
  defaults: SpendLimitDefaults,
  held: number,
  amount: number,
): SpendLimitRefusal | null {
  if (amount <= 0) return null;
  for (const period of spendPeriods) {
    const { limit } = limitOf(read, defaults, period);
    const spent = read.spent[period];
    // guard: spend-limit-check
    // guard: spend-limit-holds-count
    if (limit !== null && spent + held + amount > limit) {
      return { period, limit, spent, held, requested: amount, resetsAt: resetsAtOf(period, read.today) };
    }
  }
  return null;
}

/** The limits as `GET …/limits` answers them. */
export function spendLimitsViewOf(
  userId: string,
  read: SpendRead,
  defaults: SpendLimitDefaults,
  held: number,
): SpendLimitsView {
  const periodView = (period: SpendPeriod): SpendPeriodView => ({
    ...limitOf(read, defaults, period),
    spent: read.spent[period],
    resetsAt: resetsAtOf(period, read.today),
  });
  return { userId, held, daily: periodView('daily'), monthly: periodView('monthly') };
}
