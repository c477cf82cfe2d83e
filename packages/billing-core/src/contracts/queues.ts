import { z } from 'zod';

/**
 * Queue names and job payloads shared by every producer (ingest, relay, admin requeue) and the
 * worker. Payloads carry only ids: the inbox row in Postgres is the truth, the job is a nudge.
 */
export const queueNames = {
  inbox: 'inbox',
} as const;

export const inboxJobSchema = z.object({ inboxEventId: z.number().int().positive() });
export type InboxJob = z.infer<typeof inboxJobSchema>;

/**
 * BullMQ job ids may not contain ':' nor be all digits. One id per inbox row means a second
 * enqueue of a row that is still waiting is ignored by BullMQ instead of running it twice.
 */
export function inboxJobId(inboxEventId: number): string {
  return `inbox-${inboxEventId}`;
}
