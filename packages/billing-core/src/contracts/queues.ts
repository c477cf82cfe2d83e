import { z } from 'zod';

/**
 * The queue catalog: for each queue, the one definition every producer (ingest, api, relay,
 * CLI) and consumer (worker) reads. Payloads carry only ids: the durable row in Postgres is the
 * truth, the job is a nudge. No BullMQ import here: packages/platform declares the shape its
 * plumbing reads (its `QueueDefinition`, which documents each field) and turns a definition into
 * BullMQ options. The catalog's entries are values that have that shape by construction
 * (`defineQueue`), so the fields are declared once, there; the apps hand the entries over.
 */
export interface JobContract<Payload> {
  name: string;
  /** The job's data; it carries only the durable row's id. */
  payload: z.ZodType<Payload>;
  /** One id per durable row (no ':', not all digits): a second enqueue of a waiting row is ignored. */
  jobId(payload: Payload): string;
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

/** Finished jobs stay visible in the dashboard 7 days (50,000 completed), 30 days when failed. */
const defaultRetention = {
  completedAgeSeconds: 7 * DAY_SECONDS,
  completedCount: 50_000,
  failedAgeSeconds: 30 * DAY_SECONDS,
};

/**
 * A queue's definition with the catalog's shared policy: 25 queue-level attempts from a 5 s
 * backoff, for failures outside the row's own bookkeeping (the database is unreachable while
 * recording an outcome): the row counts real attempts and decides parking, its retries are
 * scheduled on the row and the job is delayed to match.
 */
function defineQueue<Payload>(contract: JobContract<Payload> & { retention?: Partial<typeof defaultRetention> }) {
  return {
    ...contract,
    attempts: 25,
    backoffDelayMs: 5_000,
    retention: { ...defaultRetention, ...contract.retention },
  };
}

/** A catalog entry: its contract and its queue policy (the shape platform's queue plumbing reads). */
export type CatalogQueue<Payload> = ReturnType<typeof defineQueue<Payload>>;

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
