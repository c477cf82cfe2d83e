import { type DB, queueCatalog, type StudioJob, studioRelaySource } from '@tally/billing-core';
import type { Redis } from 'ioredis';
import type { Kysely } from 'kysely';
import { createProducerQueue, type HandOffResult, handOffRows, type ProducerQueue } from './queues';

export type StudioQueue = ProducerQueue<StudioJob>;

export function createStudioQueue(connection: Redis, prefix: string): StudioQueue {
  return createProducerQueue(connection, prefix, queueCatalog.studio);
}

/**
 * Hands studio request rows to the queue after their transaction committed. When Redis is down
 * the rows are released (enqueued_at cleared) and the relay enqueues them on its next pass.
 */
export function handOffStudioRequests(
  queue: StudioQueue,
  db: Kysely<DB>,
  ids: readonly number[],
): Promise<HandOffResult> {
  return handOffRows(queue, studioRelaySource, db, ids);
}
