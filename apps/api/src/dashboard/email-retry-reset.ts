import { type DB, queueCatalog, requeueOutboxEmails } from '@tally/billing-core';
import type { Kysely } from 'kysely';
import type { RetryReset } from './create-queue-dashboard';

/**
 * The email outbox's dashboard retry: a parked email (`failed`, its attempts spent) goes back to
 * `pending` with attempts 0 before BullMQ moves its job to waiting, so the email worker claims it
 * and sends it once more. Without it the retried job finds the row `failed` and does nothing.
 * Rows not parked are left as they are (a sent email is never re-sent this way).
 */
export function createEmailRetryReset(db: Kysely<DB>): RetryReset {
  return async (jobs) => {
    const ids = jobs.flatMap((job) => {
      const parsed = queueCatalog.email.payload.safeParse(job.data);
      return parsed.success ? [parsed.data.emailId] : [];
    });
    await requeueOutboxEmails(db, ids);
  };
}
