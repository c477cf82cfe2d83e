import { BatchItemFailure } from '@tally/platform/db';
import { inUnitOfWork, type UnitOfWork, type UnitOfWorkDeps } from './unit-of-work';

/** How one kind of spend runs alone, in a shared unit, and under locks its unit already holds. */
export interface SpendKind<Item, Result> {
  /** The spend's user and its fence's reference. */
  keyOf(item: Item): { userId: string; reference: string };
  /** The spend in a unit of work of its own, its errors answered as the caller would see them. */
  alone(item: Item): Promise<Result>;
  /** Spends of distinct users and references in the caller's unit (a few statements for all); throws to fail the unit. */
  many(uow: UnitOfWork, items: readonly Item[]): Promise<Result[]>;
  /** One spend in the caller's unit, under the locks its user's earlier spend took; throws to fail the unit. */
  inUnit(uow: UnitOfWork, item: Item): Promise<Result>;
  /**
   * Whether the spend never shares a unit (one that takes another lock before the wallet's, as a
   * use that may take a free slot takes the studio lock): it runs `alone` after the others.
   */
  runsAlone?(item: Item): boolean;
}

/**
 * Spends arriving together (the api's batchers: debitTokensTogether, recordUsagesTogether), each
 * answered exactly as it would be alone, in arrival order per wallet. One unit of work (one
 * transaction) takes the first spend of each user (`many`), then each further spend of those
 * users one by one, in order, under the locks already held (`inUnit`: each decided on what the
 * ones before left, e.g. against a spend limit), so a hot wallet's spends share one commit; a
 * spend whose reference an earlier one of the call names waits for the next unit (whose user may
 * be new, so a unit only ever locks in user order). When a unit throws (a shortfall only the
 * lots saw, a reference another transaction just took, a lost connection), it rolled back whole
 * and each of its spends runs alone: nothing is applied twice (the references are the fence)
 * and no spend's refusal fails another. A spend that then fails alone too is answered by a
 * BatchItemFailure (the batcher rejects its call only), and the spends after it still run.
 */
export async function runSpendsTogether<Item, Result>(
  deps: UnitOfWorkDeps,
  items: readonly Item[],
  kind: SpendKind<Item, Result>,
): Promise<(Result | BatchItemFailure)[]> {
  const results = new Array<Result | BatchItemFailure>(items.length);
  const entries = items.map((item, index) => ({ item, index }));
  const apart = entries.filter(({ item }) => kind.runsAlone?.(item) === true);
  let waiting = entries.filter(({ item }) => kind.runsAlone?.(item) !== true);
  while (waiting.length > 0) {
    const first: typeof waiting = [];
    const after: typeof waiting = [];
    const later: typeof waiting = [];
    const users = new Set<string>();
    const referencesTaken = new Set<string>();
    for (const entry of waiting) {
      const { userId, reference } = kind.keyOf(entry.item);
      // guard: spend-batch-distinct
      const bucket = referencesTaken.has(reference) ? later : !users.has(userId) ? first : after;
      bucket.push(entry);
      users.add(userId);
      referencesTaken.add(reference);
    }
    const answers = await runUnit(
      deps,
      first.map((entry) => entry.item),
      after.map((entry) => entry.item),
      kind,
    );
    for (const [position, { index }] of [...first, ...after].entries()) {
      results[index] = answers[position] as Result | BatchItemFailure;
    }
    waiting = later;
  }
  const answers = await eachAlone(
    apart.map((entry) => entry.item),
    kind,
  );
  for (const [position, { index }] of apart.entries()) results[index] = answers[position] as Result | BatchItemFailure;
  return results;
}

/** One unit: the answers of `first` (distinct users), then of `after`, by position. */
async function runUnit<Item, Result>(
  deps: UnitOfWorkDeps,
  first: readonly Item[],
  after: readonly Item[],
  kind: SpendKind<Item, Result>,
): Promise<(Result | BatchItemFailure)[]> {
  if (first.length === 1 && after.length === 0) return eachAlone(first, kind);
  try {
    return await inUnitOfWork(deps, async (uow) => {
      const answers = first.length === 1 ? [await kind.inUnit(uow, first[0] as Item)] : await kind.many(uow, first);
      for (const item of after) answers.push(await kind.inUnit(uow, item));
      return answers;
    });
  } catch {
    // guard: spend-batch-falls-back-alone
    return await eachAlone([...first, ...after], kind);
  }
}

/**
 * Each spend in a unit of work of its own, one after the other (a wallet's spends keep their
 * order); one that throws is answered by its BatchItemFailure and the next still runs.
 */
async function eachAlone<Item, Result>(
  items: readonly Item[],
  kind: SpendKind<Item, Result>,
): Promise<(Result | BatchItemFailure)[]> {
  const answers: (Result | BatchItemFailure)[] = [];
  for (const item of items) {
    try {
      answers.push(await kind.alone(item));
    } catch (error) {
      // guard: spend-alone-failure-isolated
      answers.push(new BatchItemFailure(error));
    }
  }
  return answers;
}
