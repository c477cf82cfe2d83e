import {
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
