/**
 * Coalesces the first runs of the inbox jobs a worker process is running at once into shared
 * transactions (billing-core processInboxEvents), without making any of them wait for a batch
 * to fill: a job starts a transaction at once while fewer than `maxTransactions` are open;
 * otherwise it waits for the next one to end, and then every job that waited meanwhile (up to
 * `maxEvents`) goes in one transaction. An idle worker therefore runs each event alone, as
 * before; a busy one (a backlog, a burst) runs several per transaction, which is where the
 * round trips per event are saved. `maxEvents` 1 turns coalescing off.
 */
export interface AttemptBatcherSettings {
  /** Events in one transaction at most (INBOX_BATCH_MAX_EVENTS). */
  maxEvents: number;
  /** Transactions open at once (INBOX_BATCH_TRANSACTIONS). */
  maxTransactions: number;
}

export function createAttemptBatcher<T, R>(
  run: (items: T[]) => Promise<R[]>,
  settings: AttemptBatcherSettings,
): (item: T) => Promise<R> {
  const waiting: { item: T; resolve: (value: R) => void; reject: (error: unknown) => void }[] = [];
  let open = 0;
  const start = () => {
    while (open < settings.maxTransactions && waiting.length > 0) {
      const batch = waiting.splice(0, settings.maxEvents);
      open += 1;
      run(batch.map((entry) => entry.item))
        .then(
          (results) => {
            for (const [index, entry] of batch.entries()) entry.resolve(results[index] as R);
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
