import type { BatchItemFailure } from '@tally/platform/db';
import { runSpendsTogether } from '../unit-of-work/spends-together';
import { inUnitOfWork, type UnitOfWork, type UnitOfWorkDeps } from '../unit-of-work/unit-of-work';
import { type CaptureHoldResult, type CaptureRequest, captureHold, captureHoldsInUnit } from './end-hold';
import { type HoldAbout, type LockedHoldFunds, lockWalletsForHolds } from './lock-wallet-funds';
import { type HoldPlacement, type PlaceHoldResult, placeHold, placementFence, reserveHolds } from './place-hold';

/** An app's hold operation as the api's hold batcher takes it: a hold placed (by amount), or captured (by amount). */
export type HoldOperation = { kind: 'place'; placement: HoldPlacement } | { kind: 'capture'; request: CaptureRequest };

/** Its answer: placeHold's for a placement, captureHold's for a capture. */
export type HoldOperationResult = PlaceHoldResult | CaptureHoldResult;

/**
 * Hold placements and captures arriving together (the api's hold batcher, platform's
 * createTransactionBatcher), each answered exactly as placeHold or captureHold answers it alone in
 * a unit of its own, as debitTokensTogether does for debits (runSpendsTogether): each user's first
 * operation in holdOperationsInUnit (the wallets locked in one statement and read with the hold
 * each is about in one, the new holds and their lots in one insert, the captures in one posting
 * statement whose draws go in one update and one insert, their holds ended in one update), that
 * user's further ones in placeHold or captureHold under the lock already held, in order; one
 * commit. A unit that fails rolls back whole and runs its operations alone.
 */
export function holdOperationsTogether(
  deps: UnitOfWorkDeps,
  operations: readonly HoldOperation[],
): Promise<(HoldOperationResult | BatchItemFailure)[]> {
  return runSpendsTogether(deps, operations, {
    keyOf: (operation) =>
      operation.kind === 'place'
        ? // A hold's reference is unique per user; a capture's fence is its hold.
          {
            userId: operation.placement.userId,
            reference: `place:${operation.placement.userId}:${operation.placement.reference}`,
          }
        : { userId: operation.request.userId, reference: `capture:${operation.request.holdId}` },
    alone: (operation) => inUnitOfWork(deps, (uow) => holdOperationInUnit(uow, operation)),
    many: (uow, batch) => holdOperationsInUnit(uow, batch),
    inUnit: holdOperationInUnit,
  });
}

function holdOperationInUnit(uow: UnitOfWork, operation: HoldOperation): Promise<HoldOperationResult> {
  return operation.kind === 'place' ? placeHold(uow, operation.placement) : captureHold(uow, operation.request);
}

/**
 * Hold operations of distinct users in ONE unit of work: the wallets locked and read with the hold
 * each is about in two statements (lockWalletsForHolds), each placement fenced as placeHold fences
 * it (placementFence) and reserved as reserveHold reserves it (reserveHolds: one insert for all),
 * each capture decided and made as captureHold makes it (captureHoldsInUnit). Answers by position;
 * throws what any of them throws (the caller runs them one by one then).
 */
async function holdOperationsInUnit(
  uow: UnitOfWork,
  operations: readonly HoldOperation[],
): Promise<HoldOperationResult[]> {
  const locked = await lockWalletsForHolds(
    uow,
    operations.map((operation) => ({ userId: userIdOf(operation), about: aboutOf(operation) })),
  );
  const results = new Array<HoldOperationResult>(operations.length);
  const placements: { index: number; placement: HoldPlacement; funds: ReturnType<typeof spendFundsOf> }[] = [];
  const captures: { index: number; request: CaptureRequest; funds: LockedHoldFunds }[] = [];
  for (const [index, operation] of operations.entries()) {
    const funds = locked[index] as LockedHoldFunds;
    if (operation.kind === 'capture') {
      captures.push({ index, request: operation.request, funds });
      continue;
    }
    const fenced = placementFence(operation.placement, funds);
    if (fenced) results[index] = fenced;
    else placements.push({ index, placement: operation.placement, funds: spendFundsOf(operation.placement, funds) });
  }
  const placed = await reserveHolds(uow, placements);
  for (const [position, { index }] of placements.entries()) results[index] = placed[position] as PlaceHoldResult;
  const captured = await captureHoldsInUnit(uow, captures);
  for (const [position, { index }] of captures.entries()) results[index] = captured[position] as CaptureHoldResult;
  return results;
}

function userIdOf(operation: HoldOperation): string {
  return operation.kind === 'place' ? operation.placement.userId : operation.request.userId;
}

function aboutOf(operation: HoldOperation): HoldAbout {
  return operation.kind === 'place'
    ? { holdReference: operation.placement.reference }
    : { holdId: operation.request.holdId };
}

/** A placement's funds as a spend's: its spend counters were read (lockWalletsForHolds reads them for placements). */
function spendFundsOf(placement: HoldPlacement, funds: LockedHoldFunds) {
  const { spend } = funds;
  if (!spend) throw new Error(`the spend of ${placement.userId} was not read`);
  return { ...funds, spend, autoTopup: funds.autoTopup ?? null };
}
