import type { DB } from '@tally/billing-core';
import { Redis } from 'ioredis';
import { type Kysely, sql } from 'kysely';
import type { ChaosCluster, SupervisedProcess } from './chaos-cluster';

/** Where in its life a job was when its worker died, as its re-run shows it. */
export interface RerunEvidence {
  /** Inbox jobs BullMQ found stalled (their worker died holding them) and handed to another worker. */
  stalledJobs: number;
  /** Stalled jobs whose re-run found the row already finished: the kill fell between commit and acknowledgement. */
  killedAfterCommit: number;
  /** Stalled jobs whose re-run applied the event: the kill fell before the commit (rolled back) or before the run. */
  killedBeforeCommit: number;
  /** Stalled jobs with no re-run line in the logs (the re-run's worker was killed too, or it is still in flight). */
  unexplained: number;
  /** Inbox rows of the scenario claimed more than once (a re-run after a claim that committed). */
  rowsWithAttemptsOver1: number;
  maxAttempts: number;
}

interface LogLine {
  msg?: string;
  jobId?: string;
}

/** The JSON log lines the workers wrote after `outputBefore` (each worker's output length then). */
export function workerLogLinesSince(workers: SupervisedProcess[], outputBefore: Map<SupervisedProcess, number>) {
  return workers
    .flatMap((worker) => worker.output.slice(outputBefore.get(worker) ?? 0).split('\n'))
    .flatMap((line): LogLine[] => {
      try {
        return line.startsWith('{') ? [JSON.parse(line) as LogLine] : [];
      } catch {
        return [];
      }
    });
}

/** Job ids BullMQ reported stalled on the inbox queue since `sinceMs` (its Redis event stream). */
async function stalledInboxJobs(cluster: ChaosCluster, sinceMs: number): Promise<Set<string>> {
  const redis = new Redis(cluster.redis.url, { maxRetriesPerRequest: 1, lazyConnect: true });
  try {
    await redis.connect();
    const entries = await redis.xrange('chaos:inbox:events', String(sinceMs), '+');
    const stalled = new Set<string>();
    for (const [, fields] of entries) {
      if (fields[fields.indexOf('event') + 1] !== 'stalled') continue;
      const jobId = fields[fields.indexOf('jobId') + 1];
      if (jobId) stalled.add(jobId);
    }
    return stalled;
  } finally {
    redis.disconnect();
  }
}

/**
 * What the kills of a scenario hit, from BullMQ's `stalled` events (a dead worker's active jobs)
 * and the re-run of each stalled job in the workers' logs: "inbox event already finished" means
 * the dead worker had committed and not acknowledged; "inbox event finished" means it had not
 * committed (its transaction rolled back) or not started.
 */
export async function rerunEvidence(
  cluster: ChaosCluster,
  db: Kysely<DB>,
  options: { sinceMs: number; outputBefore: Map<SupervisedProcess, number>; eventIds: string[] },
): Promise<RerunEvidence> {
  const stalled = await stalledInboxJobs(cluster, options.sinceMs);
  const lines = workerLogLinesSince(cluster.workers, options.outputBefore);
  const finishedBefore = new Set<string>();
  const appliedByRerun = new Set<string>();
  for (const line of lines) {
    if (!line.jobId || !stalled.has(line.jobId)) continue;
    if (line.msg === 'inbox event already finished; nothing to do') finishedBefore.add(line.jobId);
    else if (line.msg === 'inbox event finished') appliedByRerun.add(line.jobId);
  }
  const { rows } = await sql<{ count: number; max: number | null }>`
    SELECT count(*) FILTER (WHERE attempts > 1)::int AS count, max(attempts)::int AS max
      FROM inbox_events WHERE provider_event_id = ANY(${options.eventIds}::text[])`.execute(db);
  // A job counted once: a row finished by the dead worker is not also "applied by the re-run".
  const killedAfterCommit = finishedBefore.size;
  const killedBeforeCommit = [...appliedByRerun].filter((jobId) => !finishedBefore.has(jobId)).length;
  return {
    stalledJobs: stalled.size,
    killedAfterCommit,
    killedBeforeCommit,
    unexplained: stalled.size - killedAfterCommit - killedBeforeCommit,
    rowsWithAttemptsOver1: rows[0]?.count ?? 0,
    maxAttempts: rows[0]?.max ?? 0,
  };
}
