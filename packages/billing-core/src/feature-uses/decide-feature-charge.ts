import { type Kysely, sql } from 'kysely';
import type { PricedFeature } from '../catalog/feature-table';
import type { DB } from '../db/schema';

/** The allowance period an instant falls in: its UTC day (`YYYY-MM-DD`) or calendar month (`YYYY-MM`). */
export function allowancePeriodOf(per: 'day' | 'month', at: Date): string {
  const day = at.toISOString().slice(0, 10);
  return per === 'day' ? day : day.slice(0, 7);
}

export interface FeatureCharge {
  freeTier: boolean;
  /** Tokens the use debits: 0 on the free tier, else its cost. */
  tokens: number;
  /** The allowance the use counts against (null: the feature has none). */
  allowance: { group: string; period: string } | null;
}

/**
 * The free allowance decision (docs/features.md), the one function behind usage, holds by
 * estimate, `check` and AI Studio: per user, allowance group and period (UTC day or month), it
 * counts the free uses that were not given back (feature_uses) and the free studio requests of
 * the period that did not fail (studio_requests, by the group each took), so both paths share one
 * allowance. A use is free while that count is below the allowance's uses.
 * Callers that act on it hold the wallet lock (no two uses take the last free slot); `check`
 * reads it without.
 */
export async function decideFeatureCharge(
  db: Kysely<DB>,
  request: { userId: string; feature: PricedFeature; cost: number; at: Date },
): Promise<FeatureCharge> {
  const allowance = request.feature.freeAllowance;
  if (!allowance || allowance.uses === 0) {
    return { freeTier: false, tokens: request.cost, allowance: allowance ? groupOf(allowance, request.at) : null };
  }
  const { group, period } = groupOf(allowance, request.at);
  const { from, to } = periodDays(allowance.per, period);
  // Studio requests are uses of the studio features: counted by the group they took (rows from
  // before migration 0036 by their kind, the group they had then).
  const studio = sql`(SELECT count(*) FROM studio_requests
              WHERE user_id = ${request.userId} AND usage_day >= ${from}::date AND usage_day < ${to}::date
                AND coalesce(allowance_group, kind) = ${group} AND free_tier AND status <> 'failed')`;
  const used = await sql<{ used: number }>`
    SELECT ((SELECT count(*) FROM feature_uses
              WHERE user_id = ${request.userId} AND allowance_group = ${group} AND allowance_period = ${period}
                AND free_tier AND NOT given_back) + ${studio})::int AS used`.execute(db);
  const freeTier = Number(used.rows[0]?.used ?? 0) < allowance.uses;
  return { freeTier, tokens: freeTier ? 0 : request.cost, allowance: { group, period } };
}

function groupOf(allowance: NonNullable<PricedFeature['freeAllowance']>, at: Date) {
  return { group: allowance.group, period: allowancePeriodOf(allowance.per, at) };
}

/** The first day of a period and the first day after it (UTC dates). */
function periodDays(per: 'day' | 'month', period: string): { from: string; to: string } {
  const from = per === 'day' ? period : `${period}-01`;
  const next = new Date(`${from}T00:00:00Z`);
  if (per === 'day') next.setUTCDate(next.getUTCDate() + 1);
  else next.setUTCMonth(next.getUTCMonth() + 1);
  return { from, to: next.toISOString().slice(0, 10) };
}
