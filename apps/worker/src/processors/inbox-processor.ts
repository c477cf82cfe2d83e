import {
  type AttemptLane,
  type InboxProcessorDeps,
  type JobFacts,
  laneOf,
  type ProcessInboxEventResult,
  processInboxEvents,
  queueCatalog,
  toErrorText,
} from '@tally/billing-core';
import type { Logger } from '@tally/platform';
import { createTransactionBatcher, type TransactionBatcherSettings } from '@tally/platform/db';
import { type Job, UnrecoverableError, type Worker } from 'bullmq';
import type { WorkerMetrics } from '../metrics/worker-metrics';
import { type ConsumerOptions, createRowConsumer, delayJob, unhandledResult } from './row-consumer';

/**
 * Stalls a job may go through before BullMQ fails it: far above any INBOX_MAX_ATTEMPTS, so the
 * row parks first. A job that waited in the stalled lane when its process died stalls again
 * without having spent an attempt.
 */
export const INBOX_MAX_STALLED_COUNT = 1_000;

export interface InboxWorkerOptions extends ConsumerOptions {
  /** How the jobs' first runs share transactions (platform's transaction-batcher.ts). */
  batch: TransactionBatcherSettings;
}

/**
 * The BullMQ consumer of the inbox queue: a thin adapter over billing-core's processInboxEvents.
 * The row, not the job, owns the schedule: a failure or a "retry later" sets next_attempt_at on
 * the row and this adapter delays the job to the same moment (DelayedError: BullMQ counts no
 * attempt), so queue-level attempts never decide parking. A parked row ends its job with
 * UnrecoverableError. Only an error of the database itself is thrown to BullMQ, whose own
 * backoff (from the queue catalog) then applies.
 */
export function createInboxWorker(
  deps: InboxProcessorDeps & { logger: Logger; metrics: WorkerMetrics },
  options: InboxWorkerOptions,
): Worker {
  const { logger, metrics } = deps;
  // Per event only what is used: the metric series are looked up once per label set (prom-client
  // hashes a label object on every observe), and the fields of an info line are built only when
  // info is logged (the production default is info; the bench runs at warn).
  const durationOf = seriesCache((provider: string, type: string, outcome: string) =>
    metrics.inboxProcessingDuration.labels(provider, type, outcome),
  );
  const lagOf = seriesCache((provider: string) => metrics.inboxLag.labels(provider));
  // The lanes a job waits in before its attempt (billing-core laneOf): first runs coalesced into
  // shared transactions; re-runs of stalled jobs one at a time in this process, claiming nothing
  // while they wait; any other re-run alone, at once. The jobs of one lane plan alike, so a batch
  // runs with the facts of its first job.
  const inLane = (settings: TransactionBatcherSettings) =>
    createTransactionBatcher<InboxJob, ProcessInboxEventResult>(
      (jobs) =>
        processInboxEvents(
          deps,
          jobs.map((job) => job.id),
          (jobs[0] as InboxJob).facts,
        ),
      settings,
    );
  const lanes: Record<AttemptLane, (job: InboxJob) => Promise<ProcessInboxEventResult>> = {
    'first-runs': inLane(options.batch),
    stalled: inLane({ maxItems: 1, maxTransactions: 1 }),
    alone: (job) => processInboxEvents(deps, [job.id], job.facts).then(([result]) => result as ProcessInboxEventResult),
  };
  // A stalled job goes back to the queue however often it stalled: the row's attempts, not
  // BullMQ's stall count, decide when an event that keeps killing its worker parks. (BullMQ's
  // default, 1, failed the job at its second stall, and the relay then enqueued the row as a
  // fresh job, outside the stalled lane.)
  const consumer = {
    options: { ...options, maxStalledCount: INBOX_MAX_STALLED_COUNT },
    logger: deps.logger,
    what: 'inbox worker',
  };
  return createRowConsumer(queueCatalog.inbox, consumer, async ({ inboxEventId }, job, token) => {
    const startedAt = process.hrtime.bigint();
    const facts = jobFactsOf(job);
    const result = await lanes[laneOf(facts)]({ id: inboxEventId, facts });
    const seconds = Number(process.hrtime.bigint() - startedAt) / 1e9;
    const log = () => ({ inboxEventId, jobId: job.id, durationMs: Math.round(seconds * 1000) });
    const rowLog = (row: {
      provider: string;
      provider_event_id: string;
      type: string;
      user_id: string | null;
      attempts: number;
      provider_payment_intent_id: string | null;
      provider_subscription_id: string | null;
    }) => ({
      provider: row.provider,
      providerEventId: row.provider_event_id,
      type: row.type,
      userId: row.user_id,
      attempt: row.attempts,
      providerPaymentIntentId: row.provider_payment_intent_id,
      providerSubscriptionId: row.provider_subscription_id,
    });
    switch (result.kind) {
      case 'processed':
      case 'ignored': {
        const { row } = result;
        durationOf(row.provider, row.type, result.kind).observe(seconds);
        // Inbox lag: receipt to finish, both on the database clock.
        if (row.processed_at) {
          lagOf(row.provider).observe(Math.max(0, (row.processed_at.getTime() - row.received_at.getTime()) / 1000));
        }
        if (logger.isLevelEnabled('info')) {
          logger.info(
            {
              ...log(),
              ...rowLog(row),
              outcome: result.kind,
              code: result.code,
              detail: result.detail,
              path: result.path,
            },
            'inbox event finished',
          );
        }
        return { status: result.kind, code: result.code };
      }
      case 'deferred': {
        deps.metrics.inboxDeferred.inc({ provider: result.row.provider });
        deps.logger.info(
          { ...log(), ...rowLog(result.row), outcome: 'deferred', delayMs: result.delayMs, reason: result.reason },
          'inbox event waits for a prerequisite; retrying later',
        );
        // guard: retry-later-delay
        return delayJob(job, token, result.delayMs);
      }
      case 'skipped':
        // A parked row runs again only after a requeue (admin API, CLI, or a dashboard retry, which
        // requeues first): a job reaching it any other way (stalled re-run, queue-level retry) stops here.
        if (result.status === 'failed') {
          deps.logger.warn(
            { ...log(), status: result.status },
            'job ran for a parked inbox event; nothing done (requeue it to run it again)',
          );
        } else {
          deps.logger.info({ ...log(), status: result.status }, 'inbox event already finished; nothing to do');
        }
        return { status: 'skipped', rowStatus: result.status };
      case 'not-found':
        throw new UnrecoverableError(`inbox event ${inboxEventId} does not exist`);
      case 'failed': {
        const { row } = result;
        const message = toErrorText(result.error);
        const fields = {
          ...log(),
          ...rowLog(row),
          outcome: result.parked ? 'parked' : 'failed',
          code: result.code,
          error: message,
        };
        if (result.code === 'reference_conflict') {
          deps.metrics.referenceConflicts.inc({ provider: row.provider });
          deps.logger.error(fields, 'ledger reference conflict: the event is parked; investigate before requeuing');
        } else {
          deps.logger.warn(fields, result.parked ? 'inbox event parked' : 'inbox event failed; will retry');
        }
        // guard: failed-job-backoff
        if (result.parked) {
          deps.metrics.inboxParked.inc({ provider: row.provider, code: result.code });
          throw new UnrecoverableError(`parked (${result.code}) after ${row.attempts} attempts: ${message}`);
        }
        return delayJob(job, token, result.delayMs);
      }
      default:
        return unhandledResult(result);
    }
  });
}

/** An inbox job as its lane holds it: the event and the facts its attempt is planned from. */
interface InboxJob {
  id: number;
  facts: JobFacts;
}

/** The one place that reads BullMQ's metadata of an inbox job: what the engine's plan needs of it. */
function jobFactsOf(job: Job): JobFacts {
  return { runsStarted: job.attemptsStarted, stalls: job.stalledCounter };
}

/** Metric series by label values, looked up once each (bounded: event types come from providers). */
function seriesCache<A extends string[], S>(lookUp: (...labels: A) => S): (...labels: A) => S {
  const cache = new Map<string, S>();
  return (...labels) => {
    const key = labels.join('\u0000');
    let series = cache.get(key);
    if (series === undefined) {
      if (cache.size >= 1_000) cache.clear();
      series = lookUp(...labels);
      cache.set(key, series);
    }
    return series;
  };
}
