import { sql } from 'kysely';
import type { Catalog } from '../catalog/catalog';
import { lockStudioUser } from '../db/lock-studio-user';
import type { HoldRow } from '../db/schema';
import { type CaptureAnswer, captureAnswerOf, type EndHoldResult, endHold, postHoldCapture } from '../holds/end-hold';
import { toHoldView } from '../holds/list-holds';
import { lockWalletForSpend, lockWalletFunds } from '../holds/lock-wallet-funds';
import { type PlaceHoldResult, reserveHold } from '../holds/place-hold';
import { listDrawableLots } from '../ledger/lots';
import { postLedgerEntry } from '../ledger/post-ledger-entry';
import { references } from '../references';
import { recordTakeBackShortfall } from '../refunds/take-back-shortfalls';
import type { SpendLimitDefaults } from '../spend-limits/spend-limits';
import { inUnitOfWork, type UnitOfWork, type UnitOfWorkDeps } from '../unit-of-work/unit-of-work';
import { decideFeatureCharge } from './decide-feature-charge';
import { meterMap, sameMeters } from './meter-map';
import { costAtPrices, priceUsage, type UsageSpec } from './price-usage';

type Deps = UnitOfWorkDeps & { catalog: Catalog };

export type PlacePricedHoldResult =
  | PlaceHoldResult
  | { kind: 'unknown-feature'; message: string; known: string[] }
  | { kind: 'invalid'; message: string };

/**
 * A hold by estimate (docs/features.md "Holds by estimate"): prices the estimate (priceUsage),
 * decides the free allowance (decideFeatureCharge: a use inside it reserves the use and 0 tokens)
 * and reserves that cost as a `priced` hold (reserveHold), keeping its use with the prices and the
 * catalog version in feature_uses (source `hold`, reference the hold's id), so the capture charges
 * the hold's prices whatever the catalog says by then. The reference is the placement's fence: the
 * same estimate under it answers the first hold; another is a conflict.
 */
export async function placePricedHold(
  deps: Deps & { spendLimits: SpendLimitDefaults },
  request: { userId: string; reference: string; spec: UsageSpec; reason: string; expiresInSeconds: number },
): Promise<PlacePricedHoldResult> {
  const priced = priceUsage(deps.catalog.features, request.spec);
  if (priced.kind === 'unknown') return { kind: 'unknown-feature', message: priced.message, known: priced.known };
  if (priced.kind === 'invalid') return priced;
  const { usage, feature } = priced;
  return inUnitOfWork(deps, async (uow) => {
    // As a usage: a use that may take a free slot serialises with the user's studio requests.
    if (feature.freeAllowance) await lockStudioUser(uow.trx, request.userId);
    const funds = await lockWalletForSpend(uow, request.userId, { holdReference: request.reference });
    const existing = funds.hold;
    if (existing) {
      const use = existing.priced ? await holdUseOf(uow, existing.id) : undefined;
      // A captured hold's use holds the actual quantities, no longer the estimate: its feature and
      // variant still say whether the retry is the same placement.
      const same =
        use !== undefined &&
        use.feature === usage.feature &&
        use.variant === usage.variant &&
        (existing.status === 'captured' || sameMeters(use.quantities, usage.quantities));
      if (!same) return { kind: 'conflict', message: `reference ${request.reference} already holds another estimate` };
      const view = toHoldView({ ...existing, view_status: existing.expired ? 'expired' : existing.status });
      return { kind: 'existing', hold: view, available: funds.available };
    }
    const at = uow.clock.now();
    const charge = await decideFeatureCharge(uow.trx, { userId: request.userId, feature, cost: usage.cost, at });
    const placed = await reserveHold(uow, funds, {
      userId: request.userId,
      reference: request.reference,
      amount: charge.tokens,
      reason: request.reason,
      expiresInSeconds: request.expiresInSeconds,
      spendLimits: deps.spendLimits,
      priced: true,
      // The hold's use, in the hold's own statement.
      alongside: (holdId, available) => sql`
        INSERT INTO feature_uses (user_id, source, reference, feature, variant, quantities, prices, per, price_version,
                                  cost, free_tier, allowance_group, allowance_period, answer_balance, answer_available,
                                  usage_day)
        VALUES (${request.userId}, 'hold', ${holdId}, ${usage.feature}, ${usage.variant},
                ${JSON.stringify(usage.quantities)}::jsonb, ${JSON.stringify(usage.prices)}::jsonb, ${usage.per},
                ${deps.catalog.version}, ${charge.tokens}, ${charge.freeTier}, ${charge.allowance?.group ?? null},
                ${charge.allowance?.period ?? null}, ${funds.balance}, ${available}, ${at.toISOString().slice(0, 10)}::date)`,
    });
    return placed;
  });
}

export interface PricedCaptureAnswer extends CaptureAnswer {
  /** What the actual quantities cost at the hold's prices (0 inside the free allowance). */
  cost: number;
  quantities: Record<string, number>;
  /** The cost past the hold, taken from what was available (`hold:{id}:excess`). */
  excess: number;
  /** What of it could not be taken: recorded as a shortfall (debt, issue 58). */
  debt: number;
}

export type CapturePricedHoldResult =
  | EndHoldResult<PricedCaptureAnswer>
  /** A hold placed with an amount: captured with an amount, not quantities (400). */
  | { kind: 'not-priced' }
  | { kind: 'unknown-feature'; message: string; known: string[] }
  | { kind: 'invalid'; message: string };

/**
 * Captures a hold by estimate at the actual cost (docs/features.md): the actual quantities priced
 * at the hold's own prices (costAtPrices; 0 for a use inside the free allowance). What the hold
 * covers is captured (`hold:{id}:capture`, from the lots it reserved) and the rest released; past
 * it, the excess is taken from what is available (`hold:{id}:excess`, a spend in the draw order),
 * and what is still missing is recorded as a take-back shortfall of source `priced_capture` (the
 * place debt will live): the work was done, so a capture never fails for its price. Under the
 * wallet lock; the hold's status is the fence (a second capture answers the first).
 */
export async function capturePricedHold(
  deps: UnitOfWorkDeps,
  request: {
    userId: string;
    holdId: string;
    quantity?: number | undefined;
    quantities?: Record<string, number> | undefined;
  },
): Promise<CapturePricedHoldResult> {
  return inUnitOfWork(deps, async (uow) => {
    const funds = await lockWalletFunds(uow, request.userId, { holdId: request.holdId });
    const { hold } = funds;
    if (!hold) return { kind: 'not-found' };
    if (!hold.priced) return { kind: 'not-priced' };
    const use = await holdUseOf(uow, hold.id);
    if (!use) throw new Error(`priced hold ${hold.id} has no use`);
    if (hold.status === 'captured') return { kind: 'already', answer: pricedAnswerOf(hold, use) };
    if (hold.status === 'released') return { kind: 'not-active', status: 'released' };
    if (hold.expired) return { kind: 'not-active', status: 'expired' };
    const actual = costAtPrices(
      { feature: use.feature, prices: use.prices, per: use.per },
      { quantity: request.quantity, quantities: request.quantities },
    );
    if (actual.kind === 'unknown') return { kind: 'unknown-feature', message: actual.message, known: actual.known };
    if (actual.kind === 'invalid') return actual;
    const cost = use.free_tier ? 0 : actual.cost;
    const amount = Number(hold.amount);
    const captured = Math.min(cost, amount);
    const wanted = cost - captured;
    const reference = references.holdCapture(hold.id);
    let balance = funds.balance;
    if (captured > 0) {
      const messageData = { feature: use.feature, variant: use.variant, quantities: actual.quantities, cost };
      const posted = await postHoldCapture(uow, request.userId, hold, captured, messageData);
      balance = posted.entry.balance_after;
    }
    // The hold ends first (captured): its reservation no longer counts, so what the excess may
    // take is what can be spent now, unheld and unexpired.
    const ended = await endHold(
      uow,
      hold,
      // Within the estimate (the common case) excess and debt are 0, written as the hold ends.
      {
        status: 'captured',
        captured,
        released: amount - captured,
        reference,
        ...(wanted === 0 ? { excess: 0, debt: 0 } : {}),
      },
      { balance, held: funds.held, shortfallsOpen: funds.shortfallsOpen },
    );
    let excess = 0;
    if (wanted > 0) {
      const spendable = (await listDrawableLots(uow.trx, request.userId, { spend: true, lock: true })).reduce(
        (sum, lot) => sum + lot.free,
        0,
      );
      // guard: priced-capture-excess-available
      excess = Math.min(wanted, spendable, Math.max(0, balance - (funds.held - amount)));
      if (excess > 0) {
        const posted = await postLedgerEntry(uow, {
          userId: request.userId,
          reference: references.holdExcess(hold.id),
          amount: -excess,
          reason: hold.reason,
          lots: { kind: 'spend' },
          messageData: { feature: use.feature, variant: use.variant, quantities: actual.quantities, cost },
        });
        balance = posted.entry.balance_after;
      }
    }
    const debt = wanted - excess;
    if (debt > 0) {
      await recordTakeBackShortfall(uow, {
        userId: request.userId,
        source: 'priced_capture',
        sourceId: hold.id,
        takeBackReference: references.holdExcess(hold.id),
        tokens: debt,
      });
    }
    const heldAfter = funds.held - amount;
    const final =
      wanted === 0
        ? ended
        : (
            await sql<HoldRow>`
              UPDATE holds SET excess = ${excess}, debt = ${debt},
                               answer_balance = ${balance}, answer_available = ${balance - heldAfter}
               WHERE id = ${hold.id} RETURNING *`.execute(uow.trx)
          ).rows[0];
    await uow.trx
      .updateTable('feature_uses')
      .set({ quantities: JSON.stringify(actual.quantities), cost })
      .where('source', '=', 'hold')
      .where('reference', '=', hold.id)
      .execute();
    return { kind: 'ended', answer: pricedAnswerOf(final ?? ended, { quantities: actual.quantities, cost }) };
  });
}

async function holdUseOf(uow: UnitOfWork, holdId: string) {
  const row = await uow.trx
    .selectFrom('feature_uses')
    .select(['feature', 'variant', 'quantities', 'prices', 'per', 'cost', 'free_tier'])
    .where('source', '=', 'hold')
    .where('reference', '=', holdId)
    .executeTakeFirst();
  return row && { ...row, quantities: meterMap(row.quantities), prices: meterMap(row.prices) };
}

function pricedAnswerOf(
  hold: HoldRow,
  use: { quantities: Record<string, number>; cost: number | string },
): PricedCaptureAnswer {
  return {
    ...captureAnswerOf(hold),
    cost: Number(use.cost),
    quantities: use.quantities,
    excess: Number(hold.excess ?? 0),
    debt: Number(hold.debt ?? 0),
  };
}
