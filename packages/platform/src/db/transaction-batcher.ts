/**
 * Coalesces concurrent calls into shared transactions without making any of them wait for a
 * batch to fill: a call starts a transaction at once while fewer than `maxTransactions` are open;
 * otherwise it waits for the next one to end, and then every call that waited meanwhile (up to
 * `maxItems`) goes in one transaction. An idle process therefore runs each call alone; a busy
 * one (a backlog, a burst) runs several per transaction, which is where the round trips per call
 * are saved. `maxItems` 1 turns coalescing off. Used by the worker for the inbox jobs' first runs
 * (billing-core processInboxEvents) and by the api for debits, usages and amount holds
 * (billing-core debitTokensTogether, recordUsagesTogether, holdOperationsTogether) and for its
 * user routes' alias look-ups (a read of its own, no transaction: createUserRoutes).
 * `run` answers each item by position; an answer that is a BatchItemFailure rejects only its item
 * (with the failure's error); when `run` throws, every item of its batch gets the error.
 */
export interface TransactionBatcherSettings {
  /** Items in one transaction at most (INBOX_BATCH_MAX_EVENTS, SPEND_BATCH_MAX_DEBITS). */
  maxItems: number;
  /** Transactions open at once (INBOX_BATCH_TRANSACTIONS, SPEND_BATCH_TRANSACTIONS). */
  maxTransactions: number;
}

/**
 * An item of a batch that failed on its own (a run that fell back to running each item alone and
 * met an error in one): the batcher rejects that item's call with `error`, and answers the others.
 */
export class BatchItemFailure {
  constructor(readonly error: unknown) {}
}

export function createTransactionBatcher<T, R>(
  run: (items: T[]) => Promise<(R | BatchItemFailure)[]>,
  settings: TransactionBatcherSettings,
): (item: T) => Promise<R> {
  for (const [name, value] of Object.entries({
    maxItems: settings.maxItems,
    maxTransactions: settings.maxTransactions,
  })) {
    // A missing or zero setting would take no item and leave every call waiting forever.
    if (!Number.isSafeInteger(value) || value < 1)
      throw new RangeError(`${name} must be a whole number of 1 or more, got ${value}`);
  }
  const waiting: { item: T; resolve: (value: R) => void; reject: (error: unknown) => void }[] = [];
  let open = 0;
  const start = () => {
    while (open < settings.maxTransactions && waiting.length > 0) {
      const batch = waiting.splice(0, settings.maxItems);
      open += 1;
      run(batch.map((entry) => entry.item))
        .then(
          (results) => {
            for (const [index, entry] of batch.entries()) {
              const result = results[index];
              // guard: batch-item-failure-alone
              if (result instanceof BatchItemFailure) entry.reject(result.error);
              else entry.resolve(result as R);
            }
          },
          (error: unknown) => {
            for (const entry of batch) entry.reject(error);
          },
        )
        .finally(() => {
          open -= 1;
          start();
        });
    }
  };
  return (item) =>
    new Promise<R>((resolve, reject) => {
      waiting.push({ item, resolve, reject });
      start();
    });
}
