import { type Kysely, sql } from 'kysely';
import type { DB } from '../db/schema';

/** One day's uses of one feature (and variant): what `GET …/usage` and `GET /admin/usage` list. */
export interface UsageDay {
  /** The UTC day, YYYY-MM-DD. */
  date: string;
  feature: string;
  variant: string | null;
  /** Uses that succeeded: usages, captured holds by estimate, studio requests that did not fail. */
  uses: number;
  /** Of those, inside the free allowance. */
  freeUses: number;
  /** Each meter's quantities summed (a studio request: one `use`). */
  quantities: Record<string, number>;
  /** Tokens charged for them. */
  tokens: number;
  /** The admin report only: the distinct users. */
  users?: number;
}

/** The longest range a report covers, in days (from and to included). */
export const maxUsageReportDays = 366;

/**
 * Uses per UTC day and feature (docs/features.md "Reports"), from the rows kept for them, never a
 * scan of the ledger: feature_uses (usages, and holds by estimate once captured) and studio
 * requests that did not fail (their kinds are the features image_edit, music_clip, music_full),
 * between `from` and `to` (UTC dates, both included), for one user or (`userId` null) across
 * users with the distinct users of each row. Ordered by date, feature, variant.
 */
export async function reportUsage(
  db: Kysely<DB>,
  request: { userId: string | null; from: string; to: string; feature?: string | undefined },
): Promise<UsageDay[]> {
  const user = (column: string) => (request.userId === null ? sql`TRUE` : sql`${sql.ref(column)} = ${request.userId}`);
  const feature = (expression: ReturnType<typeof sql>) =>
    request.feature === undefined ? sql`TRUE` : sql`${expression} = ${request.feature}`;
  const studioFeature = sql`CASE WHEN r.kind = 'image_edit' THEN 'image_edit' WHEN r.full THEN 'music_full' ELSE 'music_clip' END`;
  const rows = await sql<{
    date: string;
    feature: string;
    variant: string | null;
    uses: number;
    free_uses: number;
    quantities: Record<string, number>[];
    tokens: number;
    users: number;
  }>`
    WITH uses AS (
      SELECT u.usage_day, u.feature, u.variant, u.user_id, u.free_tier, u.quantities, u.cost
        FROM feature_uses u
        LEFT JOIN holds h ON u.source = 'hold' AND h.id = u.reference
       WHERE ${user('u.user_id')} AND u.usage_day BETWEEN ${request.from}::date AND ${request.to}::date
         AND ${feature(sql`u.feature`)}
         AND (u.source = 'usage' OR h.status = 'captured')
      UNION ALL
      SELECT r.usage_day, ${studioFeature}, NULL, r.user_id, r.free_tier, '{"use": 1}'::jsonb, r.tokens_charged
        FROM studio_requests r
       WHERE ${user('r.user_id')} AND r.usage_day BETWEEN ${request.from}::date AND ${request.to}::date
         AND ${feature(studioFeature)} AND r.status <> 'failed')
    SELECT to_char(usage_day, 'YYYY-MM-DD') AS date, feature, variant, count(*)::int AS uses,
           count(*) FILTER (WHERE free_tier)::int AS free_uses, array_agg(quantities) AS quantities,
           coalesce(sum(cost), 0)::bigint AS tokens, count(DISTINCT user_id)::int AS users
      FROM uses
     GROUP BY usage_day, feature, variant
     ORDER BY usage_day, feature, variant NULLS FIRST`.execute(db);
  return rows.rows.map((row) => {
    const quantities: Record<string, number> = {};
    for (const each of row.quantities) {
      for (const [meter, quantity] of Object.entries(each))
        quantities[meter] = (quantities[meter] ?? 0) + Number(quantity);
    }
    return {
      date: row.date,
      feature: row.feature,
      variant: row.variant,
      uses: Number(row.uses),
      freeUses: Number(row.free_uses),
      quantities,
      tokens: Number(row.tokens),
      ...(request.userId === null ? { users: Number(row.users) } : {}),
    };
  });
}
