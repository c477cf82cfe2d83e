import { type DB, pruneAppWebhookMessages, pruneIdempotencyKeys, pruneInboxRawBodies } from '@tally/billing-core';
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
  /**
   * APP_WEBHOOK_RETENTION_DAYS; `undelivered` when APP_WEBHOOK_URL is unset (nothing will deliver
   * pending messages, so they go after the same time).
   */
  appWebhooks?: { retentionDays: number; undelivered: boolean };
}

/**
 * Role 'retention': prunes the raw bodies of finished inbox events past their retention, deletes
 * the product API's idempotency keys past their TTL (a retry with a deleted key runs as a new
 * request; docs/idempotency.md), and delivered app webhook messages past their retention.
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
      const appWebhooks = options.appWebhooks;
      if (appWebhooks) {
        const deleted = await pruneAppWebhookMessages(deps.db, {
          retentionDays: appWebhooks.retentionDays,
          undelivered: appWebhooks.undelivered,
          ...(options.batchSize === undefined ? {} : { batchSize: options.batchSize }),
        });
        if (deleted > 0) {
          deps.logger.info({ deleted, retentionDays: appWebhooks.retentionDays }, 'app webhook messages pruned');
        }
      }
    },
    deps.logger,
  );
}
