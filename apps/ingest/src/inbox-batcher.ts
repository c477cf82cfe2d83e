import { type DB, type InboxEventDraft, markInboxEnqueueFailed, recordInboxEvents } from '@tally/billing-core';
import type { Logger } from '@tally/platform';
import type { Kysely } from 'kysely';

/**
 * A webhook's fate. The row is durable before anything else happens, and "accepted" means
 * exactly that: committed. Handing its id to the queue follows (see createInboxBatcher); if the
 * queue cannot take it (Redis down), the relay enqueues it later. Only a database that cannot be
 * reached makes the provider retry.
 */
export type AcceptWebhookResult =
  | { kind: 'accepted'; inboxEventId: number }
  | { kind: 'duplicate'; inboxEventId: number | null }
  | { kind: 'unavailable' };

export interface InboxBatcherOptions {
  db: Kysely<DB>;
  /** Hands many new rows to the queue at once (BullMQ addBulk). Throws if Redis cannot take them. */
  enqueueMany: (inboxEventIds: number[]) => Promise<unknown>;
  logger: Logger;
  /** Largest batch one insert carries (INGEST_BATCH_MAX_SIZE). */
  maxBatchSize: number;
  /** Batch inserts allowed in flight at once, each holding one pool connection (INGEST_BATCH_CONCURRENCY). */
  maxConcurrentBatches: number;
  /**
   * Bulk enqueues allowed to run behind answers already sent. Past this many (Redis slower than
   * Postgres), a batch's requests wait for their own hand-off before they are answered, so
   * pending hand-offs, and the memory they hold, stay bounded.
   */
  maxPendingHandOffs?: number;
  /**
   * A request whose event is not stored by then is answered `unavailable` (503; the provider
   * retries) instead of waiting on: a database behind a silent network path never answers, and a
   * provider that times out first counts the delivery failed without Tally saying so
   * (INGEST_ANSWER_DEADLINE_MS). An insert already sent may still commit: the retry is then a
   * duplicate, answered 200. Unset: no deadline.
   */
  answerDeadlineMs?: number;
}

export interface InboxBatcher {
  /** Stores the draft (batched with concurrent ones) and hands it to the queue. */
  accept(draft: InboxEventDraft): Promise<AcceptWebhookResult>;
  /** Resolves when every submitted draft has its answer. */
  drain(): Promise<void>;
}

interface Pending {
  draft: InboxEventDraft;
  resolve: (result: AcceptWebhookResult) => void;
  reject: (error: unknown) => void;
}

/**
 * Micro-batches webhook inserts with no added latency at low load: a draft is flushed at the end
 * of the event-loop turn while fewer than `maxConcurrentBatches` inserts are in flight, and drafts
 * that arrive while every slot is busy go together when one frees, so batches grow with the load.
 * A batch is ONE multi-row insert (recordInboxEvents, one commit) and ONE bulk enqueue; a request
 * resolves only after its own row committed (a 503 for the whole batch when the database is
 * unreachable, a row-level failure fails only its request). The answer does not wait for the
 * enqueue (up to `maxPendingHandOffs` of them): each row is written with enqueued_at = now(), so
 * the relay finds a row whose hand-off was lost. drain() waits for the hand-offs too.
 */
export function createInboxBatcher(options: InboxBatcherOptions): InboxBatcher {
  const { maxBatchSize, maxConcurrentBatches: maxConcurrent } = options;
  const maxPendingHandOffs = options.maxPendingHandOffs ?? 16;
  let queue: Pending[] = [];
  let inFlight = 0;
  let pendingHandOffs = 0;
  let scheduled = false;
  const running = new Set<Promise<void>>();

  function schedule(): void {
    if (scheduled || inFlight >= maxConcurrent || queue.length === 0) return;
    scheduled = true;
    setImmediate(flush);
  }

  function flush(): void {
    scheduled = false;
    while (inFlight < maxConcurrent && queue.length > 0) {
      const batch = queue.slice(0, maxBatchSize);
      queue = queue.slice(batch.length);
      inFlight += 1;
      const run = runBatch(batch).finally(() => running.delete(run));
      running.add(run);
    }
  }

  async function runBatch(batch: Pending[]): Promise<void> {
    let results: Awaited<ReturnType<typeof recordInboxEvents>>;
    try {
      results = await recordInboxEvents(
        options.db,
        batch.map((pending) => pending.draft),
      );
    } catch (error) {
      // recordInboxEvents does not throw; if it ever does, no request of the batch may get a 200.
      for (const pending of batch) pending.reject(error);
      return;
    } finally {
      // The connection is free again: the next batch's insert overlaps this one's enqueue.
      inFlight -= 1;
      schedule();
    }

    const recorded: { pending: Pending; inboxEventId: number }[] = [];
    for (const [index, result] of results.entries()) {
      const pending = batch[index] as Pending;
      switch (result.kind) {
        case 'recorded':
          recorded.push({ pending, inboxEventId: result.inboxEventId });
          break;
        case 'duplicate':
          pending.resolve({ kind: 'duplicate', inboxEventId: result.inboxEventId });
          break;
        case 'unavailable':
          pending.resolve({ kind: 'unavailable' });
          break;
        case 'failed':
          pending.reject(result.error);
          break;
        default: {
          const exhaustive: never = result;
          throw new Error(`unhandled result ${JSON.stringify(exhaustive)}`);
        }
      }
    }
    if (recorded.length === 0) return;
    const handOff = handOffToQueue(recorded.map((entry) => entry.inboxEventId));
    // Redis slower than Postgres: too many hand-offs behind sent answers, so this batch waits.
    if (pendingHandOffs > maxPendingHandOffs) await handOff;
    for (const { pending, inboxEventId } of recorded) pending.resolve({ kind: 'accepted', inboxEventId });
  }

  /** The bulk enqueue of committed rows; on failure releases them to the relay. Never rejects. */
  function handOffToQueue(ids: number[]): Promise<void> {
    pendingHandOffs += 1;
    const run = (async () => {
      try {
        await options.enqueueMany(ids);
      } catch (error) {
        options.logger.warn(
          { err: error, inboxEventIds: ids },
          'enqueue failed; the relay will hand these events to the queue',
        );
        await markInboxEnqueueFailed(options.db, ids).catch(() => undefined);
      } finally {
        pendingHandOffs -= 1;
      }
    })();
    const tracked = run.finally(() => running.delete(tracked));
    running.add(tracked);
    return run;
  }

  return {
    accept(draft) {
      return new Promise<AcceptWebhookResult>((resolve, reject) => {
        const deadlineMs = options.answerDeadlineMs;
        if (deadlineMs === undefined) {
          queue.push({ draft, resolve, reject });
          schedule();
          return;
        }
        const pending: Pending = {
          draft,
          resolve: (result) => {
            clearTimeout(timer);
            resolve(result);
          },
          reject: (error) => {
            clearTimeout(timer);
            reject(error);
          },
        };
        const timer = setTimeout(() => {
          // Not sent yet: it never will be. Sent: its batch may still commit (then a retry is a
          // duplicate); either way this request is answered now.
          queue = queue.filter((queued) => queued !== pending);
          options.logger.warn(
            { provider: draft.provider, providerEventId: draft.providerEventId, deadlineMs },
            'event not stored within the answer deadline; answering 503',
          );
          // guard: ingest-answer-deadline
          resolve({ kind: 'unavailable' });
        }, deadlineMs);
        queue.push(pending);
        schedule();
      });
    },
    async drain() {
      while (queue.length > 0 || running.size > 0) {
        await Promise.allSettled([...running]);
        if (queue.length > 0 && running.size === 0) flush();
      }
    },
  };
}
