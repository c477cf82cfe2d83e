import { type DB, pruneIdempotencyKeys, pruneInboxRawBodies } from '@tally/billing-core';
import type { Logger } from '@tally/platform';
import type { Kysely } from 'kysely';
import { type PeriodicLoop, runPeriodic } from './run-periodic';

export interface RetentionLoopOptions {
  intervalMs: number;
  /** INBOX_RAW_BODY_RETENTION_DAYS. */
  retentionDays: number;
  /** IDEMPOTENCY_KEY_TTL_HOURS: the product API's idempotency keys are deleted after this. */
  idempotencyKeyTtlHours: number;
  batchSize?: number;
}

/**
 * Role 'retention': prunes the raw bodies of finished inbox events past their retention, and
 * deletes the product API's idempotency keys past their TTL (a retry with a deleted key runs as
 * a new request; docs/idempotency.md).
 */
export function startRetentionLoop(
  deps: { db: Kysely<DB>; logger: Logger },
  options: RetentionLoopOptions,
): PeriodicLoop {
  return runPeriodic(
    'retention',
    options.intervalMs,
    async () => {
      const pruned = await pruneInboxRawBodies(deps.db, {
        retentionDays: options.retentionDays,
        ...(options.batchSize === undefined ? {} : { batchSize: options.batchSize }),
      });
      if (pruned > 0) deps.logger.info({ pruned, retentionDays: options.retentionDays }, 'inbox raw bodies pruned');
      const keys = await pruneIdempotencyKeys(deps.db, {
        ttlHours: options.idempotencyKeyTtlHours,
        ...(options.batchSize === undefined ? {} : { batchSize: options.batchSize }),
      });
      if (keys > 0) {
        deps.logger.info({ pruned: keys, ttlHours: options.idempotencyKeyTtlHours }, 'idempotency keys pruned');
      }
    },
    deps.logger,
  );
}
