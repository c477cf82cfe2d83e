import { sqlMilliseconds } from '@tally/platform/db';
import { type Kysely, sql } from 'kysely';
import type { CatalogQueue } from '../contracts/queues';
import type { DB } from '../db/schema';

export interface RelayClaimOptions {
  /** A row due this long without its job having run (hand-off failed, Redis lost it) is enqueued again. */
  staleAfterMs: number;
  /** A row stuck in its processing status this long (its worker died) is enqueued again. */
  processingStaleAfterMs: number;
  batchSize: number;
}

/**
 * A table of durable rows that a queue works through: the inbox, and every outbox to come
 * (emails first). Each such table has `id`, `status`, `enqueued_at` (last hand-off to the queue,
 * NULL when it failed), `next_attempt_at` (not due before) and `updated_at`. The one relay loop
 * serves them all through this interface.
 */
export interface DurableRowSource<Payload = unknown> {
  name: string;
  queue: CatalogQueue<Payload>;
  toPayload(id: number): Payload;
  /**
   * Claims rows that need work but may have no job: due and never handed off, hand-off failed,
   * Redis lost the job, or stuck in processing after a worker died. Stamps enqueued_at (database
   * clock) and returns their ids. FOR UPDATE SKIP LOCKED: any number of relays may run.
   */
  claimStranded(db: Kysely<DB>, options: RelayClaimOptions): Promise<number[]>;
  /** Clears enqueued_at so the next relay pass hands these rows off again. */
  releaseHandOff(db: Kysely<DB>, ids: readonly number[]): Promise<void>;
}

type RelayTable = {
  [T in keyof DB]: DB[T] extends {
    id: unknown;
    status: unknown;
    enqueued_at: unknown;
    next_attempt_at: unknown;
    updated_at: unknown;
  }
    ? T
    : never;
}[keyof DB];

/**
 * A DurableRowSource for a table that follows the convention above. Rows in `pendingStatus` are
 * stranded once due and not handed off for staleAfterMs; rows in `processingStatus` once neither
 * updated nor handed off for processingStaleAfterMs. Leave `processingStatus` out for a table
 * whose stuck rows must not run again (a sweeper settles them instead, e.g. AI Studio requests).
 */
export function createDurableRowSource<Payload>(spec: {
  name: string;
  table: RelayTable;
  pendingStatus: string;
  processingStatus?: string;
  queue: CatalogQueue<Payload>;
  toPayload(id: number): Payload;
}): DurableRowSource<Payload> {
  const table = sql.table(spec.table);
  return {
    name: spec.name,
    queue: spec.queue,
    toPayload: spec.toPayload,
    async claimStranded(db, options) {
      const stale = sql`now() - ${sqlMilliseconds(options.staleAfterMs)}`;
      const processingStale = sql`now() - ${sqlMilliseconds(options.processingStaleAfterMs)}`;
      const stuckInProcessing =
        // guard: relay-stuck-recovery
        spec.processingStatus === undefined
          ? sql`false`
          : sql`(status = ${spec.processingStatus}
                 AND updated_at < ${processingStale}
                 AND (enqueued_at IS NULL OR enqueued_at < ${processingStale}))`;
      const rows = await sql<{ id: number }>`
        UPDATE ${table} SET enqueued_at = now()
         WHERE id IN (
           SELECT id FROM ${table}
            WHERE (status = ${spec.pendingStatus}
                   AND (enqueued_at IS NULL
                        OR greatest(enqueued_at, coalesce(next_attempt_at, enqueued_at)) < ${stale}))
               OR ${stuckInProcessing}
            ORDER BY id
            LIMIT ${options.batchSize}
            FOR UPDATE SKIP LOCKED)
        RETURNING id`.execute(db);
      return rows.rows.map((row) => row.id).sort((a, b) => a - b);
    },
    async releaseHandOff(db, ids) {
      if (ids.length === 0) return;
      await sql`UPDATE ${table} SET enqueued_at = NULL WHERE id = ANY(${[...ids]}::bigint[])`.execute(db);
    },
  };
}
