import { type DB, pruneInboxRawBodies } from '@tally/billing-core';
import type { Logger } from '@tally/platform';
import type { Kysely } from 'kysely';
import { type PeriodicLoop, runPeriodic } from './run-periodic';

export interface RetentionLoopOptions {
  intervalMs: number;
  /** INBOX_RAW_BODY_RETENTION_DAYS. */
  retentionDays: number;
  batchSize?: number;
}

/** Prunes the raw bodies of finished inbox events past the retention (role 'retention'). */
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
    },
    deps.logger,
  );
}
