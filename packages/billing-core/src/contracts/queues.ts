import { z } from 'zod';

/**
 * The queue catalog: for each queue, the one definition every producer (ingest, api, relay,
 * CLI) and consumer (worker) reads. Payloads carry only ids: the durable row in Postgres is the
 * truth, the job is a nudge. No BullMQ import here; packages/platform turns a definition into
 * BullMQ options.
 */
export interface QueueDefinition<Payload> {
  name: string;
  payload: z.ZodType<Payload>;
  /**
   * BullMQ job ids may not contain ':' nor be all digits. One id per durable row means a second
   * enqueue of a row that is still waiting is ignored instead of running it twice.
   */
  jobId(payload: Payload): string;
  /**
   * Queue-level attempts, for failures outside the row's own bookkeeping (the database is
   * unreachable while recording an outcome). The row counts real attempts and decides parking;
   * its retries are scheduled on the row and the job is delayed to match.
   */
  attempts: number;
  /** First delay of the queue-level exponential backoff. */
  backoffDelayMs: number;
  /** Finished jobs stay visible in the dashboard this long; Postgres keeps everything. */
  retention: { completedAgeSeconds: number; completedCount: number; failedAgeSeconds: number };
}

export const inboxJobSchema = z.object({ inboxEventId: z.number().int().positive() });
export type InboxJob = z.infer<typeof inboxJobSchema>;

export const studioJobSchema = z.object({ studioRequestId: z.number().int().positive() });
export type StudioJob = z.infer<typeof studioJobSchema>;

const DAY_SECONDS = 24 * 3600;

export const emailJobSchema = z.object({ emailId: z.number().int().positive() });
export type EmailJob = z.infer<typeof emailJobSchema>;

export const appWebhookJobSchema = z.object({ appWebhookMessageId: z.number().int().positive() });
export type AppWebhookJob = z.infer<typeof appWebhookJobSchema>;

/**
 * A queue's definition with the catalog's shared policy: 25 queue-level attempts from a 5 s
 * backoff, and finished jobs visible for 7 days (50,000 completed) or 30 days when failed.
 */
function defineQueue<Payload>(
  definition: Pick<QueueDefinition<Payload>, 'name' | 'payload' | 'jobId'> & {
    retention?: Partial<QueueDefinition<Payload>['retention']>;
  },
): QueueDefinition<Payload> {
  return {
    ...definition,
    attempts: 25,
    backoffDelayMs: 5_000,
    retention: {
      completedAgeSeconds: 7 * DAY_SECONDS,
      completedCount: 50_000,
      failedAgeSeconds: 30 * DAY_SECONDS,
      ...definition.retention,
    },
  };
}

export const queueCatalog = {
  inbox: defineQueue<InboxJob>({
    name: 'inbox',
    payload: inboxJobSchema,
    jobId: (payload) => `inbox-${payload.inboxEventId}`,
  }),
  /** AI Studio generations; the studio_requests row keeps attempts and the schedule. */
  studio: defineQueue<StudioJob>({
    name: 'studio',
    payload: studioJobSchema,
    jobId: (payload) => `studio-${payload.studioRequestId}`,
  }),
  email: defineQueue<EmailJob>({
    name: 'email',
    payload: emailJobSchema,
    jobId: (payload) => `email-${payload.emailId}`,
  }),
  /**
   * Outbound webhooks to the app; the app_webhook_messages row keeps attempts and the schedule.
   * One message per ledger entry: completed jobs are kept a day (10,000), not a week.
   */
  appWebhooks: defineQueue<AppWebhookJob>({
    name: 'app-webhooks',
    payload: appWebhookJobSchema,
    jobId: (payload) => `app-webhook-${payload.appWebhookMessageId}`,
    retention: { completedAgeSeconds: 1 * DAY_SECONDS, completedCount: 10_000 },
  }),
} as const;

export type QueueCatalog = typeof queueCatalog;
export type QueueKey = keyof QueueCatalog;

export function inboxJobId(inboxEventId: number): string {
  return queueCatalog.inbox.jobId({ inboxEventId });
}
