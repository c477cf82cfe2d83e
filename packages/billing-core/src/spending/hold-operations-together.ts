import type { BatchItemFailure } from '@tally/platform/db';
import {
  type CapturePricedHoldResult,
  capturePricedInUnit,
  captureWithExcess,
  decidedCaptureOf,
  decidePricedCapture,
  endedAnswerOf,
  type PricedCaptureDecision,
  type PricedCaptureRequest,
  type PricedPlacement,
  placePricedInUnit,
  pricedPlacementFence,
  pricedReservation,
} from '../features/priced-holds';
import {
  type CaptureHoldResult,
  type CaptureRequest,
  captureAnswerOf,
  captureDecided,
  captureHold,
  type DecidedCapture,
  decideCapture,
} from '../holds/end-hold';
import { type HoldAbout, type LockedHoldFunds, lockWalletsForHolds } from '../holds/lock-wallet-funds';
import {
  type HoldPlacement,
  type PlaceHoldResult,
  placeHold,
  placementFence,
  type Reservation,
  reserveHolds,
} from '../holds/place-hold';
import { runSpendsTogether } from '../unit-of-work/spends-together';
import { inUnitOfWork, type UnitOfWork, type UnitOfWorkDeps } from '../unit-of-work/unit-of-work';

/**
 * An app's hold operation as the api's hold batcher takes it: a hold placed by amount or by
 * estimate (priced already: preparePricedPlacement), or captured by amount or by the actual
 * quantities.
 */
export type HoldOperation =
  | { kind: 'place'; placement: HoldPlacement }
  | { kind: 'capture'; request: CaptureRequest }
  | { kind: 'place-priced'; placement: PricedPlacement }
  | { kind: 'capture-priced'; request: PricedCaptureRequest };

/** Its answer: placeHold's (or placePricedHold's) for a placement, captureHold's or capturePricedHold's for a capture. */
export type HoldOperationResult = PlaceHoldResult | CaptureHoldResult | CapturePricedHoldResult;

/**
 * Hold placements and captures, by amount and by estimate, arriving together (the api's hold
 * batcher, platform's createTransactionBatcher), each answered exactly as placeHold, captureHold,
 * placePricedHold or capturePricedHold answers it alone in a unit of its own, as
 * debitTokensTogether does for debits (runSpendsTogether): each user's first operation in
 * holdOperationsInUnit (the wallets locked in one statement and read with the hold each is about,
 * and its use, in one; the new holds, their lots and uses in one insert; the captures in one
 * posting statement whose draws go in one update and one insert, their holds and uses ended in
 * one update), that user's further ones in the single path under the lock already held, in
 * order; one commit. A unit that fails rolls back whole and runs its operations alone. A
 * placement by estimate that may take a free slot runs alone after the others (it takes the
 * studio lock before the wallet's, as a usage does).
 */
export async function holdOperationsTogether(
  deps: UnitOfWorkDeps,
  operations: readonly HoldOperation[],
): Promise<(HoldOperationResult | BatchItemFailure)[]> {
  return runSpendsTogether(deps, operations, {
    keyOf: (operation) => {
      const { userId, reference, holdId } = keyPartsOf(operation);
      // A hold's reference is unique per user (by amount or by estimate); a capture's fence is its hold.
      return holdId === undefined
        ? { userId, reference: `place:${userId}:${reference}` }
        : { userId, reference: `capture:${holdId}` };
    },
    alone: (operation) => inUnitOfWork(deps, (uow) => holdOperationInUnit(uow, operation)),
    many: (uow, batch) => holdOperationsInUnit(uow, batch),
    inUnit: holdOperationInUnit,
    // guard: priced-free-placement-alone
    runsAlone: (operation) => operation.kind === 'place-priced' && Boolean(operation.placement.feature.freeAllowance),
  });
}

/** One operation in the caller's unit, as alone (under the lock its user's earlier operation took, if any). */
function holdOperationInUnit(uow: UnitOfWork, operation: HoldOperation): Promise<HoldOperationResult> {
  switch (operation.kind) {
    case 'place':
      return placeHold(uow, operation.placement);
    case 'capture':
      return captureHold(uow, operation.request);
    case 'place-priced':
      return placePricedInUnit(uow, operation.placement);
    case 'capture-priced':
      return capturePricedInUnit(uow, operation.request);
  }
}

/**
 * Hold operations of distinct users in ONE unit of work: the wallets locked and read with the hold
 * each is about (and a hold by estimate's use) in two statements (lockWalletsForHolds); each
 * placement fenced as alone (placementFence, pricedPlacementFence), a placement by estimate's
 * cost decided as alone (pricedReservation), all reserved as reserveHold reserves one
 * (reserveHolds: one insert for the holds, lots and uses); each capture decided as alone
 * (decideCapture, decidePricedCapture) and all made in one posting statement and one update
 * (captureDecided). A capture by estimate past its hold runs as alone (captureWithExcess) under
 * the lock held. Answers by position; throws what any of them throws (the caller runs them one by
 * one then).
 */
async function holdOperationsInUnit(
  uow: UnitOfWork,
  operations: readonly HoldOperation[],
): Promise<HoldOperationResult[]> {
  const locked = await lockWalletsForHolds(
    uow,
    operations.map((operation) => ({ userId: keyPartsOf(operation).userId, about: aboutOf(operation) })),
  );
  const results = new Array<HoldOperationResult>(operations.length);
  const placements: { index: number; placement: Reservation; funds: ReturnType<typeof spendFundsOf> }[] = [];
  const captures: { index: number; capture: DecidedCapture; priced?: PricedDecision }[] = [];
  const pastHold: { index: number; userId: string; funds: LockedHoldFunds; decision: PricedDecision }[] = [];
  for (const [index, operation] of operations.entries()) {
    const funds = locked[index] as LockedHoldFunds;
    switch (operation.kind) {
      case 'place': {
        const fenced = placementFence(operation.placement, funds);
        if (fenced) results[index] = fenced;
        else
          placements.push({ index, placement: operation.placement, funds: spendFundsOf(operation.placement, funds) });
        break;
      }
      case 'place-priced': {
        const { placement } = operation;
        const fenced = pricedPlacementFence(placement, funds);
        if (fenced) results[index] = fenced;
        else {
          const reservation = await pricedReservation(uow, placement);
          placements.push({ index, placement: reservation, funds: spendFundsOf(placement, funds) });
        }
        break;
      }
      case 'capture': {
        const { request } = operation;
        const decision = decideCapture(request, funds.hold);
        if (decision.kind === 'answer') results[index] = decision.result;
        else {
          const { hold, captured } = decision;
          captures.push({ index, capture: { userId: request.userId, funds, hold, captured } });
        }
        break;
      }
      case 'capture-priced': {
        const { userId } = operation.request;
        const decision = decidePricedCapture(operation.request, funds.hold);
        if (decision.kind === 'answer') results[index] = decision.result;
        // guard: priced-batch-excess-alone
        else if (decision.wanted > 0) pastHold.push({ index, userId, funds, decision });
        else captures.push({ index, capture: decidedCaptureOf(userId, funds, decision), priced: decision });
        break;
      }
    }
  }
  const placed = await reserveHolds(uow, placements);
  for (const [position, { index }] of placements.entries()) results[index] = placed[position] as PlaceHoldResult;
  const rows = await captureDecided(
    uow,
    captures.map(({ capture }) => capture),
  );
  for (const [position, { index, priced }] of captures.entries()) {
    const row = rows[position];
    if (!row) throw new Error('a capture was not ended');
    results[index] = priced ? endedAnswerOf(row, priced) : { kind: 'ended', answer: captureAnswerOf(row) };
  }
  for (const { index, userId, funds, decision } of pastHold) {
    results[index] = await captureWithExcess(uow, userId, funds, decision);
  }
  return results;
}

type PricedDecision = Extract<PricedCaptureDecision, { kind: 'capture' }>;

/** An operation's user, and its placement's reference or its capture's hold. */
function keyPartsOf(operation: HoldOperation): { userId: string; reference?: string; holdId?: string } {
  switch (operation.kind) {
    case 'place':
    case 'place-priced':
      return { userId: operation.placement.userId, reference: operation.placement.reference };
    case 'capture':
    case 'capture-priced':
      return { userId: operation.request.userId, holdId: operation.request.holdId };
  }
}

function aboutOf(operation: HoldOperation): HoldAbout {
  const { reference, holdId } = keyPartsOf(operation);
  return holdId === undefined ? { holdReference: reference as string } : { holdId };
}

/** A placement's funds as a spend's: its spend counters were read (lockWalletsForHolds reads them for placements). */
function spendFundsOf(placement: { userId: string }, funds: LockedHoldFunds) {
  const { spend } = funds;
  if (!spend) throw new Error(`the spend of ${placement.userId} was not read`);
  return { ...funds, spend, autoTopup: funds.autoTopup ?? null };
}
