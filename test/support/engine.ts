import {
  type HandlerContext,
  type InboxEventRow,
  type InboxHandler,
  type InboxProcessorDeps,
  type JobFacts,
  type ProcessInboxEventResult,
  processInboxEvents,
} from '@tally/billing-core';

/** A job's first run (never started before, never stalled): planAttempt may skip the claim. */
export const firstRun: JobFacts = { runsStarted: 1, stalls: 0 };
/** A job run again after a thrown error: planAttempt claims. */
export const retryRun: JobFacts = { runsStarted: 2, stalls: 0 };

/** One event through the engine's one entry point (a batch of one), run as a job with `facts`. */
export async function processOne(
  deps: InboxProcessorDeps,
  inboxEventId: number,
  facts: JobFacts = retryRun,
): Promise<ProcessInboxEventResult> {
  const [result] = await processInboxEvents(deps, [inboxEventId], facts);
  if (result === undefined) throw new Error(`no result for inbox event ${inboxEventId}`);
  return result;
}

/**
 * `handler`'s prepare as if it read its provider first (every attempt then claims): `before` runs
 * in that read, outside any transaction (it may count calls, throw or wait), then the real
 * prepare and read.
 */
export function withProviderRead(
  handler: InboxHandler,
  before: (row: InboxEventRow, ctx: HandlerContext) => Promise<void>,
): InboxHandler['prepare'] {
  return (row, ctx) => ({
    kind: 'read',
    touchesLedger: true,
    async read() {
      await before(row, ctx);
      const preparation = handler.prepare(row, ctx);
      return preparation.kind === 'ready' ? preparation.prepared : preparation.read();
    },
  });
}
