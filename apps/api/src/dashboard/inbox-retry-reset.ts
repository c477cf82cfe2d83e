import { type DB, queueCatalog, requeueInboxEventIds } from '@tally/billing-core';
import type { Kysely } from 'kysely';
import type { RetryReset } from './create-queue-dashboard';

/**
 * The inbox's dashboard retry: the parked rows behind the retried jobs get requeue's fresh start
 * (`failed → received`, attempts 0, error and wait cleared) before BullMQ moves the jobs back to
 * waiting, so the worker claims and processes them as after `POST /admin/events/{id}/requeue`.
 * Rows that are not parked are left as they are.
 */
export function createInboxRetryReset(db: Kysely<DB>): RetryReset {
  return async (jobs) => {
    const ids = jobs.flatMap((job) => {
      const parsed = queueCatalog.inbox.payload.safeParse(job.data);
      return parsed.success ? [parsed.data.inboxEventId] : [];
    });
    await requeueInboxEventIds(db, ids);
  };
}
