/** Rows per statement of a retention prune when its caller names none. */
export const DEFAULT_PRUNE_BATCH_SIZE = 1_000;

/**
 * Runs `batch` (one short statement: one transaction) until one touches fewer than `batchSize`
 * rows, so a backlog is pruned without one long transaction; returns the rows touched in all.
 */
export async function pruneInBatches(batchSize: number, batch: () => Promise<number>): Promise<number> {
  let total = 0;
  for (;;) {
    const count = await batch();
    total += count;
    if (count < batchSize) return total;
  }
}
