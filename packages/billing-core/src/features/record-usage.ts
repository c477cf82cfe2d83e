import { sql } from 'kysely';
import { triggerAutoTopup } from '../auto-topup/trigger-auto-topup';
import type { Catalog } from '../catalog/catalog';
import { lockStudioUser } from '../db/lock-studio-user';
import type { FeatureUseRow } from '../db/schema';
import { InsufficientBalanceError, LedgerReferenceConflictError } from '../errors';
import { lockWalletForSpend } from '../holds/lock-wallet-funds';
import { postLedgerEntry } from '../ledger/post-ledger-entry';
import { references } from '../references';
import { type SpendLimitDefaults, type SpendLimitRefusal, spendLimitRefusal } from '../spend-limits/spend-limits';
import { inUnitOfWork, type UnitOfWork, type UnitOfWorkDeps } from '../unit-of-work/unit-of-work';
import { decideFeatureCharge } from './decide-feature-charge';
import { meterMap, sameMeters } from './meter-map';
import { type PricedUsage, priceUsage, type UsageSpec } from './price-usage';

export interface UsageAnswer {
  ledgerReference: string;
  feature: string;
  variant: string | null;
  quantities: Record<string, number>;
  /** Tokens charged: 0 on the free tier. */
  cost: number;
  freeTier: boolean;
  priceVersion: string;
  /** The balance right after the usage (the same on every retry). */
  balance: number;
  available: number;
  draws: { lotId: number; amount: number }[];
}

export type RecordUsageResult =
  | { kind: 'recorded'; answer: UsageAnswer }
  /** The reference recorded the same usage before: nothing charged now, the first answer. */
  | { kind: 'already-recorded'; answer: UsageAnswer }
  /** The reference recorded another usage or user (409 reference_conflict). */
  | { kind: 'conflict'; message: string }
  /** An unknown feature, variant or meter (400 unknown_feature, naming the known ones). */
  | { kind: 'unknown-feature'; message: string; known: string[] }
  | { kind: 'invalid'; message: string }
  /** Short: nothing charged (402 insufficient_balance with cost and available). */
  | { kind: 'insufficient'; cost: number; available: number }
  /** A spend limit refuses the cost (402 spend_limit_reached): nothing recorded. */
  | { kind: 'spend-limit'; refusal: SpendLimitRefusal };

/**
 * Records one use of a catalog feature (docs/features.md, `POST /v1/users/{userId}/usage`): prices
 * it from the catalog (priceUsage), decides the free allowance (decideFeatureCharge), debits the
 * cost from what is available under `usage:{reference}` (a spend in the draw order) and keeps the
 * use with its quantities, prices and the catalog's version, all in one unit of work under the
 * wallet lock. The reference is the fence: the same usage again answers the first answer and
 * charges nothing; another usage or user under it is a conflict (the unique (source, reference)
 * backs it against a twin of another user). Past a spend limit (after the fence) or short of
 * `available` it records nothing.
 */
export async function recordUsage(
  deps: UnitOfWorkDeps & { catalog: Catalog; spendLimits: SpendLimitDefaults },
  request: { userId: string; reference: string; spec: UsageSpec },
): Promise<RecordUsageResult> {
  const priced = priceUsage(deps.catalog.features, request.spec);
  if (priced.kind === 'unknown') return { kind: 'unknown-feature', message: priced.message, known: priced.known };
  if (priced.kind === 'invalid') return priced;
  const ledgerReference = references.usage(request.reference);
  const conflict = {
    kind: 'conflict',
    message: `reference ${request.reference} already recorded another usage or user`,
  } as const;
  try {
    return await inUnitOfWork(deps, async (uow) => {
      // A use that may take a free slot serialises with the user's studio requests, which count
      // against the same allowances under the studio lock (taken before the wallet's, as they do).
      if (priced.feature.freeAllowance) await lockStudioUser(uow.trx, request.userId);
      const funds = await lockWalletForSpend(uow, request.userId);
      const previous = await findUse(uow, request.reference);
      // guard: usage-reference-fence
      if (previous)
        return sameUse(previous, request.userId, priced.usage) ? answerOf(uow, previous, 'already-recorded') : conflict;
      const at = uow.clock.now();
      const charge = await decideFeatureCharge(uow.trx, {
        userId: request.userId,
        feature: priced.feature,
        cost: priced.usage.cost,
        at,
      });
      const refusal = spendLimitRefusal(funds.spend, deps.spendLimits, funds.held, charge.tokens);
      // guard: usage-spend-limit
      if (refusal) return { kind: 'spend-limit', refusal } as const;
      if (funds.available < charge.tokens) {
        return { kind: 'insufficient', cost: charge.tokens, available: Math.max(0, funds.available) } as const;
      }
      let balance = funds.balance;
      let entryId: number | null = null;
      if (charge.tokens > 0) {
        const posted = await postLedgerEntry(uow, {
          userId: request.userId,
          reference: ledgerReference,
          amount: -charge.tokens,
          reason: 'usage',
          lots: { kind: 'spend' },
          messageData: {
            feature: priced.usage.feature,
            variant: priced.usage.variant,
            quantities: priced.usage.quantities,
            cost: charge.tokens,
          },
        });
        balance = posted.entry.balance_after;
        entryId = posted.entry.id;
        // guard: usage-triggers-auto-topup
        await triggerAutoTopup(uow, request.userId, funds.autoTopup, funds.available - charge.tokens);
      }
      // The use and the answer's draws in one statement (a round trip less on the spend path).
      const inserted = (
        await sql<FeatureUseRow & { draws: { lotId: number; amount: number }[] }>`
          WITH u AS (
            INSERT INTO feature_uses (user_id, source, reference, feature, variant, quantities, prices, per,
                                      price_version, cost, free_tier, allowance_group, allowance_period,
                                      ledger_reference, answer_balance, answer_available, usage_day)
            VALUES (${request.userId}, 'usage', ${request.reference}, ${priced.usage.feature}, ${priced.usage.variant},
                    ${JSON.stringify(priced.usage.quantities)}::jsonb, ${JSON.stringify(priced.usage.prices)}::jsonb,
                    ${priced.usage.per}, ${deps.catalog.version}, ${charge.tokens}, ${charge.freeTier},
                    ${charge.allowance?.group ?? null}, ${charge.allowance?.period ?? null},
                    ${charge.tokens > 0 ? ledgerReference : null}, ${balance}, ${balance - funds.held},
                    ${at.toISOString().slice(0, 10)}::date)
            ON CONFLICT ON CONSTRAINT feature_uses_reference_uq DO NOTHING
            RETURNING *)
          SELECT u.*,
                 coalesce((SELECT json_agg(json_build_object('lotId', d.lot_id, 'amount', d.amount)
                                           ORDER BY d.position NULLS LAST, d.lot_id)
                             FROM ledger_draws d WHERE d.ledger_entry_id = ${entryId}), '[]'::json) AS draws
            FROM u`.execute(uow.trx)
      ).rows[0];
      // Another user's use took the reference since the look-up: roll this one back (its debit too).
      if (!inserted)
        throw new LedgerReferenceConflictError(
          ledgerReference,
          { userId: '?', amount: 0 },
          { userId: request.userId, amount: -charge.tokens },
        );
      return answerOf(uow, { ...inserted, quantities: meterMap(inserted.quantities) }, 'recorded', inserted.draws);
    });
  } catch (error) {
    // The spend's own check (an expired lot's tokens count in available but cannot be spent).
    if (error instanceof InsufficientBalanceError) {
      return { kind: 'insufficient', cost: priced.usage.cost, available: error.available };
    }
    if (error instanceof LedgerReferenceConflictError && error.reference === ledgerReference) return conflict;
    throw error;
  }
}

async function findUse(uow: UnitOfWork, reference: string) {
  const row = await uow.trx
    .selectFrom('feature_uses')
    .selectAll()
    .where('source', '=', 'usage')
    .where('reference', '=', reference)
    .executeTakeFirst();
  return row && { ...row, quantities: meterMap(row.quantities) };
}

/** The same usage: the user, feature, variant and quantities of the first (prices may have changed since). */
function sameUse(
  row: { user_id: string; feature: string; variant: string | null; quantities: Record<string, number> },
  userId: string,
  usage: PricedUsage,
): boolean {
  return (
    row.user_id === userId &&
    row.feature === usage.feature &&
    row.variant === usage.variant &&
    sameMeters(row.quantities, usage.quantities)
  );
}

async function answerOf(
  uow: UnitOfWork,
  row: {
    reference: string;
    feature: string;
    variant: string | null;
    quantities: Record<string, number>;
    cost: number | string;
    free_tier: boolean;
    price_version: string;
    answer_balance: number | string;
    answer_available: number | string;
    ledger_reference: string | null;
  },
  kind: 'recorded' | 'already-recorded',
  /** The draws when the caller read them already (a new use's statement does). */
  known?: { lotId: number; amount: number }[],
): Promise<RecordUsageResult> {
  const draws =
    known?.map((d) => ({ lotId: Number(d.lotId), amount: Number(d.amount) })) ??
    (row.ledger_reference === null
      ? []
      : (
          await sql<{ lot_id: number; amount: number }>`
            SELECT d.lot_id, d.amount FROM ledger_draws d JOIN ledger_entries e ON e.id = d.ledger_entry_id
             WHERE e.reference = ${row.ledger_reference} ORDER BY d.position NULLS LAST, d.lot_id`.execute(uow.trx)
        ).rows.map((d) => ({ lotId: Number(d.lot_id), amount: Number(d.amount) })));
  return {
    kind,
    answer: {
      ledgerReference: references.usage(row.reference),
      feature: row.feature,
      variant: row.variant,
      quantities: row.quantities,
      cost: Number(row.cost),
      freeTier: row.free_tier,
      priceVersion: row.price_version,
      balance: Number(row.answer_balance),
      available: Number(row.answer_available),
      draws,
    },
  };
}
