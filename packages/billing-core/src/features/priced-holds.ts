import { sql } from 'kysely';
import type { Catalog } from '../catalog/catalog';
import type { PricedFeature } from '../catalog/feature-table';
import { sameMeters } from '../catalog/meter-map';
import { costAtPrices, type PricedUsage, priceUsage, type UsageSpec } from '../catalog/price-usage';
import { lockStudioUser } from '../db/lock-studio-user';
import type { HoldRow } from '../db/schema';
import { decideFeatureCharge } from '../feature-uses/decide-feature-charge';
import { featureUseOf } from '../feature-uses/feature-use';
import { type CaptureAnswer, captureAnswerOf, captureDecided, type EndHoldResult } from '../holds/end-hold';
import { toHoldView } from '../holds/list-holds';
import { type LockedFunds, type LockedHold, lockWalletForSpend, lockWalletFunds } from '../holds/lock-wallet-funds';
import { type HoldPlacement, type PlaceHoldResult, type Reservation, reserveHold } from '../holds/place-hold';
import { listDrawableLots } from '../ledger/lots';
import { postLedgerEntry } from '../ledger/post-ledger-entry';
import { references } from '../references';
import { recordTakeBackShortfall } from '../refunds/take-back-shortfalls';
import type { SpendLimitDefaults } from '../spend-limits/spend-limits';
import { inUnitOfWork, type UnitOfWork, type UnitOfWorkDeps } from '../unit-of-work/unit-of-work';

type Deps = UnitOfWorkDeps & { catalog: Catalog };

export type PlacePricedHoldResult =
  | PlaceHoldResult
  | { kind: 'unknown-feature'; message: string; known: string[] }
  | { kind: 'invalid'; message: string };

/** A hold by estimate as the app asks for it. */
export interface PricedPlacementRequest {
  userId: string;
  reference: string;
  spec: UsageSpec;
  reason: string;
  expiresInSeconds: number;
  spendLimits: SpendLimitDefaults;
}

/** A hold by estimate priced from the catalog (preparePricedPlacement), ready to place alone or in a batch. */
export interface PricedPlacement extends Omit<HoldPlacement, 'amount'> {
  usage: PricedUsage;
  feature: PricedFeature;
  /** The catalog's version the estimate was priced at (kept with the hold's use). */
  priceVersion: string;
}

/**
 * A hold by estimate priced (priceUsage), before any database work: the placement to make, or
 * its answer already (an unknown feature, variant or meter; an invalid quantity).
 */
export function preparePricedPlacement(
  catalog: Catalog,
  request: PricedPlacementRequest,
): PricedPlacement | { result: PlacePricedHoldResult } {
  const priced = priceUsage(catalog.features, request.spec);
  if (priced.kind === 'unknown') {
    return { result: { kind: 'unknown-feature', message: priced.message, known: priced.known } };
  }
  if (priced.kind === 'invalid') return { result: priced };
  const { spec: _spec, ...placement } = request;
  return { ...placement, usage: priced.usage, feature: priced.feature, priceVersion: catalog.version };
}

/**
 * A hold by estimate (docs/features.md "Holds by estimate"): prices the estimate (priceUsage),
 * decides the free allowance (decideFeatureCharge: a use inside it reserves the use and 0 tokens)
 * and reserves that cost as a `priced` hold (reserveHold), keeping its use with the prices and the
 * catalog version in feature_uses (source `hold`, reference the hold's id), so the capture charges
 * the hold's prices whatever the catalog says by then. The reference is the placement's fence: the
 * same estimate under it answers the first hold; another is a conflict. The api places it in its
 * hold batcher (holdOperationsTogether), answered as here.
 */
export async function placePricedHold(
  deps: Deps & { spendLimits: SpendLimitDefaults },
  request: Omit<PricedPlacementRequest, 'spendLimits'>,
): Promise<PlacePricedHoldResult> {
  const prepared = preparePricedPlacement(deps.catalog, { ...request, spendLimits: deps.spendLimits });
  if ('result' in prepared) return prepared.result;
  return inUnitOfWork(deps, (uow) => placePricedInUnit(uow, prepared));
}

/**
 * A hold by estimate placed in the caller's unit: a use that may take a free slot takes the
 * user's studio lock first (as a usage and a studio request do: before the wallet's), then the
 * wallet lock (with the hold under the reference and its use), its fence, then its reservation.
 */
export async function placePricedInUnit(uow: UnitOfWork, placement: PricedPlacement): Promise<PlaceHoldResult> {
  if (placement.feature.freeAllowance) await lockStudioUser(uow.trx, placement.userId);
  const funds = await lockWalletForSpend(uow, placement.userId, { holdReference: placement.reference });
  const fenced = pricedPlacementFence(placement, funds);
  if (fenced) return fenced;
  return reserveHold(uow, funds, await pricedReservation(uow, placement));
}

/**
 * A hold by estimate's fence under the wallet lock (one definition for a placement alone and in a
 * batch): the hold already under its reference answers (the same estimate: that hold, in whatever
 * state it is now; anything else: a conflict); null when there is none.
 */
export function pricedPlacementFence(
  placement: Pick<PricedPlacement, 'reference' | 'usage'>,
  funds: Pick<LockedFunds, 'hold' | 'available'>,
): PlaceHoldResult | null {
  const existing = funds.hold;
  if (!existing) return null;
  const { use } = existing;
  const { usage } = placement;
  // A captured hold's use holds the actual quantities, no longer the estimate: its feature and
  // variant still say whether the retry is the same placement.
  // guard: priced-hold-reference-fence
  const same =
    use !== undefined &&
    use.feature === usage.feature &&
    use.variant === usage.variant &&
    (existing.status === 'captured' || sameMeters(use.quantities, usage.quantities));
  if (!same) return { kind: 'conflict', message: `reference ${placement.reference} already holds another estimate` };
  const view = toHoldView({ ...existing, view_status: existing.expired ? 'expired' : existing.status });
  return { kind: 'existing', hold: view, available: funds.available };
}

/**
 * What a hold by estimate reserves, under its wallet lock (one definition alone and in a batch):
 * its cost after the free allowance (decideFeatureCharge; no statement for a feature without
 * one), with its use to keep.
 */
export async function pricedReservation(uow: UnitOfWork, placement: PricedPlacement): Promise<Reservation> {
  const { usage, feature } = placement;
  const at = uow.clock.now();
  const charge = await decideFeatureCharge(uow.trx, { userId: placement.userId, feature, cost: usage.cost, at });
  const { usage: _usage, feature: _feature, priceVersion, ...hold } = placement;
  return { ...hold, amount: charge.tokens, use: featureUseOf(usage, charge, priceVersion, at) };
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

/** A capture of a hold by estimate: the actual quantities of its feature. */
export interface PricedCaptureRequest {
  userId: string;
  holdId: string;
  quantity?: number | undefined;
  quantities?: Record<string, number> | undefined;
}

/**
 * Captures a hold by estimate at the actual cost (docs/features.md): the actual quantities priced
 * at the hold's own prices (costAtPrices; 0 for a use inside the free allowance). What the hold
 * covers is captured (`hold:{id}:capture`, from the lots it reserved) and the rest released; past
 * it, the excess is taken from what is available (`hold:{id}:excess`, a spend in the draw order),
 * and what is still missing is recorded as a take-back shortfall of source `priced_capture` (the
 * place debt will live): the work was done, so a capture never fails for its price. Under the
 * wallet lock; the hold's status is the fence (a second capture answers the first). The api
 * captures it in its hold batcher (holdOperationsTogether), answered as here.
 */
export function capturePricedHold(
  deps: UnitOfWorkDeps,
  request: PricedCaptureRequest,
): Promise<CapturePricedHoldResult> {
  return inUnitOfWork(deps, (uow) => capturePricedInUnit(uow, request));
}

/** A capture by estimate in the caller's unit: the wallet lock (with the hold and its use), its decision, the capture. */
export async function capturePricedInUnit(
  uow: UnitOfWork,
  request: PricedCaptureRequest,
): Promise<CapturePricedHoldResult> {
  const funds = await lockWalletFunds(uow, request.userId, { holdId: request.holdId });
  const decision = decidePricedCapture(request, funds.hold);
  if (decision.kind === 'answer') return decision.result;
  if (decision.wanted > 0) return captureWithExcess(uow, request.userId, funds, decision);
  const [row] = await captureDecided(uow, [decidedCaptureOf(request.userId, funds, decision)]);
  return endedAnswerOf(row as HoldRow, decision);
}

/** What a capture by estimate does under its wallet lock once its hold (and use) is read. */
export type PricedCaptureDecision =
  | { kind: 'answer'; result: CapturePricedHoldResult }
  | {
      kind: 'capture';
      hold: LockedHold;
      /** The actual quantities and what they cost at the hold's prices (0 inside the free allowance). */
      quantities: Record<string, number>;
      cost: number;
      /** What the hold covers of the cost, and what is past it (the excess to take). */
      captured: number;
      wanted: number;
    };

/**
 * A capture by estimate's rules under the wallet lock (one definition alone and in a batch): the
 * hold's kind and status first (a captured hold answers its first capture: the fence), then the
 * actual quantities priced at the hold's prices, then what the hold covers and what is past it.
 */
export function decidePricedCapture(
  request: Pick<PricedCaptureRequest, 'quantity' | 'quantities'>,
  hold: LockedHold | undefined,
): PricedCaptureDecision {
  const answer = (result: CapturePricedHoldResult): PricedCaptureDecision => ({ kind: 'answer', result });
  if (!hold) return answer({ kind: 'not-found' });
  if (!hold.priced) return answer({ kind: 'not-priced' });
  const { use } = hold;
  if (!use) throw new Error(`priced hold ${hold.id} has no use`);
  // guard: priced-capture-fence
  if (hold.status === 'captured') return answer({ kind: 'already', answer: pricedAnswerOf(hold, use) });
  if (hold.status === 'released') return answer({ kind: 'not-active', status: 'released' });
  if (hold.expired) return answer({ kind: 'not-active', status: 'expired' });
  const actual = costAtPrices(
    { feature: use.feature, prices: use.prices, per: use.per },
    { quantity: request.quantity, quantities: request.quantities },
  );
  if (actual.kind === 'unknown')
    return answer({ kind: 'unknown-feature', message: actual.message, known: actual.known });
  if (actual.kind === 'invalid') return answer(actual);
  const cost = use.freeTier ? 0 : actual.cost;
  const captured = Math.min(cost, Number(hold.amount));
  return { kind: 'capture', hold, quantities: actual.quantities, cost, captured, wanted: cost - captured };
}

type CaptureDecision = Extract<PricedCaptureDecision, { kind: 'capture' }>;

/** A decided capture by estimate as captureDecided takes it (alone or with a batch's captures). */
export function decidedCaptureOf(userId: string, funds: LockedFunds, decision: CaptureDecision) {
  const { hold, quantities, cost, captured, wanted } = decision;
  const use = hold.use as NonNullable<LockedHold['use']>;
  return {
    userId,
    funds,
    hold,
    captured,
    priced: {
      use: { quantities, cost },
      messageData: { feature: use.feature, variant: use.variant, quantities, cost },
      withinHold: wanted === 0,
    },
  };
}

/** The answer of a capture by estimate its hold's row (as captureDecided ended it) gives. */
export function endedAnswerOf(row: HoldRow, decision: CaptureDecision): CapturePricedHoldResult {
  return { kind: 'ended', answer: pricedAnswerOf(row, { quantities: decision.quantities, cost: decision.cost }) };
}

/**
 * A capture by estimate past its hold, under the wallet lock taken (alone, or by a batch: the
 * rare case runs as it does alone): the hold captured and ended first (captureDecided: its
 * reservation no longer counts, so what the excess may take is what can be spent now, unheld and
 * unexpired), the excess taken from it (`hold:{id}:excess`), the rest recorded as a shortfall.
 */
export async function captureWithExcess(
  uow: UnitOfWork,
  userId: string,
  funds: LockedFunds,
  decision: CaptureDecision,
): Promise<CapturePricedHoldResult> {
  const { hold, quantities, cost, wanted } = decision;
  const use = hold.use as NonNullable<LockedHold['use']>;
  const amount = Number(hold.amount);
  const [ended] = await captureDecided(uow, [decidedCaptureOf(userId, funds, decision)]);
  let balance = Number((ended as HoldRow).answer_balance);
  const spendable = (await listDrawableLots(uow.trx, userId, { spend: true, lock: true })).reduce(
    (sum, lot) => sum + lot.free,
    0,
  );
  // guard: priced-capture-excess-available
  const excess = Math.min(wanted, spendable, Math.max(0, balance - (funds.held - amount)));
  if (excess > 0) {
    const posted = await postLedgerEntry(uow, {
      userId,
      reference: references.holdExcess(hold.id),
      amount: -excess,
      reason: hold.reason,
      lots: { kind: 'spend' },
      messageData: { feature: use.feature, variant: use.variant, quantities, cost },
    });
    balance = posted.entry.balance_after;
  }
  const debt = wanted - excess;
  if (debt > 0) {
    await recordTakeBackShortfall(uow, {
      userId,
      source: 'priced_capture',
      sourceId: hold.id,
      takeBackReference: references.holdExcess(hold.id),
      tokens: debt,
    });
  }
  const heldAfter = funds.held - amount;
  const final = (
    await sql<HoldRow>`
      UPDATE holds SET excess = ${excess}, debt = ${debt},
                       answer_balance = ${balance}, answer_available = ${balance - heldAfter}
       WHERE id = ${hold.id} RETURNING *`.execute(uow.trx)
  ).rows[0];
  return endedAnswerOf(final ?? (ended as HoldRow), decision);
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
