import type { Logger } from '@tally/platform';

/**
 * A loop over leased durable rows that call a provider after commit (auto top-up's charges, the App
 * Store's consumption answers): each pass claims a batch (leased, SKIP LOCKED: any number of
 * replicas; a dead worker's row is due again when its lease ends), runs each row (the provider call
 * outside any transaction, its answer recorded in one), counts each outcome, logs it, and claims
 * again while a batch comes back full.
 */
export interface LeasedRowsSpec<Row, Outcome extends string> {
  /** Names the rows in the log lines (`auto top-up attempt`). */
  what: string;
  claim(batchSize: number): Promise<Row[]>;
  run(row: Row): Promise<{ outcome: Outcome; code?: string | undefined }>;
  count(outcome: Outcome): void;
  /** The row's fields in its log line. */
  logFields(row: Row): Record<string, unknown>;
  /** Outcomes logged at info; the others at warn. */
  quiet: readonly Outcome[];
}

export async function runLeasedRowsPass<Row, Outcome extends string>(
  spec: LeasedRowsSpec<Row, Outcome>,
  batchSize: number,
  logger: Logger,
): Promise<void> {
  for (;;) {
    const claimed = await spec.claim(batchSize);
    for (const row of claimed) {
      const startedAt = Date.now();
      const result = await spec.run(row);
      spec.count(result.outcome);
      const log = {
        ...spec.logFields(row),
        outcome: result.outcome,
        code: result.code,
        durationMs: Date.now() - startedAt,
      };
      if (spec.quiet.includes(result.outcome)) logger.info(log, spec.what);
      else logger.warn(log, `${spec.what} did not succeed`);
    }
    if (claimed.length < batchSize) return;
  }
}
