import { type DB, queueCatalog, requeueInboxEventIds, requeueOutboxEmails } from '@tally/billing-core';
import type { Kysely } from 'kysely';
import type { RetryReset } from './create-queue-dashboard';

/** A dashboard retry that first resets the rows behind the retried jobs (those whose payload parses). */
function rowsRetryReset<Payload>(
  queue: { payload: { safeParse(data: unknown): { success: true; data: Payload } | { success: false } } },
  idOf: (payload: Payload) => number,
  reset: (ids: number[]) => Promise<unknown>,
): RetryReset {
  return async (jobs) => {
    const ids = jobs.flatMap((job) => {
      const parsed = queue.payload.safeParse(job.data);
      return parsed.success ? [idOf(parsed.data)] : [];
    });
    await reset(ids);
  };
}

/**
 * The inbox's dashboard retry: the parked rows behind the retried jobs get requeue's fresh start
 * (`failed → received`, attempts 0, error and wait cleared) before BullMQ moves the jobs back to
 * waiting, so the worker claims and processes them as after `POST /admin/events/{id}/requeue`.
 * Rows that are not parked are left as they are.
 */
export function createInboxRetryReset(db: Kysely<DB>): RetryReset {
  return rowsRetryReset(
    queueCatalog.inbox,
    (job) => job.inboxEventId,
    (ids) => requeueInboxEventIds(db, ids),
  );
}

/**
 * The email outbox's dashboard retry: a parked email (`failed`, its attempts spent) goes back to
 * `pending` with attempts 0 before BullMQ moves its job to waiting, so the email worker claims it
 * and sends it once more. Without it the retried job finds the row `failed` and does nothing.
 * Rows not parked are left as they are (a sent email is never re-sent this way).
 */
export function createEmailRetryReset(db: Kysely<DB>): RetryReset {
  return rowsRetryReset(
    queueCatalog.email,
    (job) => job.emailId,
    (ids) => requeueOutboxEmails(db, ids),
  );
}
