import { type SqlBatchArrayType, sqlBatchArray } from '@tally/platform/db';
import { type RawBuilder, sql } from 'kysely';
import { meterMap } from '../catalog/meter-map';
import type { PricedUsage } from '../catalog/price-usage';
import type { FeatureUseRow } from '../db/schema';
import type { FeatureCharge } from './decide-feature-charge';

/**
 * A use of a catalog feature as feature_uses keeps it (docs/features.md): what was priced
 * (PricedUsage), at which catalog version, what it costs after the free allowance and which
 * allowance it counts against. One shape for the two sources that write it: a usage
 * (features/record-usage.ts) and a hold by estimate (features/priced-holds.ts, kept by
 * holds/place-hold.ts in its hold's statement).
 */
export interface FeatureUse extends Omit<PricedUsage, 'cost'> {
  priceVersion: string;
  /** Tokens charged (a usage) or reserved (a hold): 0 inside the free allowance. */
  cost: number;
  freeTier: boolean;
  allowance: { group: string; period: string } | null;
  /** The UTC day of the use (`YYYY-MM-DD`). */
  usageDay: string;
}

/** A use to keep, or kept: whose, under which reference, and the answer a retry gets. */
export interface KeptFeatureUse {
  /** `hold`: a hold by estimate's use, its reference the hold's id. */
  source: FeatureUseRow['source'];
  userId: string;
  reference: string;
  use: FeatureUse;
  /** A charged usage's debit (`usage:{reference}`); null for a free usage and for a hold's use. */
  ledgerReference: string | null;
  /** The balance after it, and available after it. */
  answer: { balance: number; available: number };
}

/** A priced usage as it is kept once its charge is decided at `at` under the catalog's `priceVersion`. */
export function featureUseOf(usage: PricedUsage, charge: FeatureCharge, priceVersion: string, at: Date): FeatureUse {
  return {
    feature: usage.feature,
    variant: usage.variant,
    quantities: usage.quantities,
    prices: usage.prices,
    per: usage.per,
    priceVersion,
    cost: charge.tokens,
    freeTier: charge.freeTier,
    allowance: charge.allowance,
    usageDay: at.toISOString().slice(0, 10),
  };
}

/**
 * The one insert of feature_uses: the uses in one statement, `RETURNING reference`. The meters go
 * as jsonb[] and the day as date[]: text cast per row in the statement cost a usage's insert 40 µs
 * more (about 250 against 205 µs a call of one to three uses, measured side by side). Run alone, or
 * as a CTE of the statement that writes what the uses go with (a charged usage's draws, a hold's
 * row). `onConflict`: a use whose (source, reference) is taken is skipped (the caller finds it
 * missing from what the insert returns) rather than failing the statement.
 */
export function insertFeatureUsesSql(
  uses: readonly KeptFeatureUse[],
  options: { onConflict: boolean } = { onConflict: false },
): RawBuilder<{ reference: string }> {
  const column = (type: SqlBatchArrayType, value: (kept: KeptFeatureUse) => unknown) =>
    sqlBatchArray(uses.map(value), type);
  return sql<{ reference: string }>`
    INSERT INTO feature_uses (user_id, source, reference, feature, variant, quantities, prices, per, price_version, cost,
                              free_tier, allowance_group, allowance_period, ledger_reference, answer_balance,
                              answer_available, usage_day)
    SELECT user_id, source, reference, feature, variant, quantities, prices, per, price_version, cost, free_tier,
           allowance_group, allowance_period, ledger_reference, answer_balance, answer_available, usage_day
      FROM unnest(${column('text', (k) => k.userId)}, ${column('text', (k) => k.source)},
                  ${column('text', (k) => k.reference)}, ${column('text', (k) => k.use.feature)},
                  ${column('text', (k) => k.use.variant)}, ${column('jsonb', (k) => JSON.stringify(k.use.quantities))},
                  ${column('jsonb', (k) => JSON.stringify(k.use.prices))}, ${column('int', (k) => k.use.per)},
                  ${column('text', (k) => k.use.priceVersion)}, ${column('bigint', (k) => k.use.cost)},
                  ${column('boolean', (k) => k.use.freeTier)}, ${column('text', (k) => k.use.allowance?.group ?? null)},
                  ${column('text', (k) => k.use.allowance?.period ?? null)}, ${column('text', (k) => k.ledgerReference)},
                  ${column('bigint', (k) => k.answer.balance)}, ${column('bigint', (k) => k.answer.available)},
                  ${column('date', (k) => k.use.usageDay)})
           AS u (user_id, source, reference, feature, variant, quantities, prices, per, price_version, cost, free_tier,
                 allowance_group, allowance_period, ledger_reference, answer_balance, answer_available, usage_day)
    ${options.onConflict ? sql`ON CONFLICT ON CONSTRAINT feature_uses_reference_uq DO NOTHING` : sql``}
    RETURNING reference`;
}

/** A feature_uses row as a statement read it (`row_to_json`: numbers may come as text, jsonb parsed) as a kept use. */
export function keptFeatureUseOf(row: FeatureUseRow): KeptFeatureUse {
  return {
    source: row.source,
    userId: row.user_id,
    reference: row.reference,
    use: {
      feature: row.feature,
      variant: row.variant,
      quantities: meterMap(row.quantities),
      prices: meterMap(row.prices),
      per: Number(row.per),
      priceVersion: row.price_version,
      cost: Number(row.cost),
      freeTier: row.free_tier,
      allowance:
        row.allowance_group === null || row.allowance_period === null
          ? null
          : { group: row.allowance_group, period: row.allowance_period },
      usageDay: String(row.usage_day).slice(0, 10),
    },
    ledgerReference: row.ledger_reference,
    answer: { balance: Number(row.answer_balance), available: Number(row.answer_available) },
  };
}
