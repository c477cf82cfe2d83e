import { type Kysely, sql } from 'kysely';
import type { DB } from '../db/schema';

/** Scrape-time figures of the outbox: the age of the oldest unfinished message, and counts by status. */
export async function readAppWebhookGauges(
  db: Kysely<DB>,
): Promise<{ oldestPendingAgeSeconds: number; pending: number; failed: number }> {
  const row = (
    await sql<{ oldest_age: number | null; pending: number; failed: number }>`
      SELECT (SELECT extract(epoch FROM (now() - created_at))::float8
                FROM app_webhook_messages WHERE status IN ('pending', 'processing') ORDER BY id LIMIT 1) AS oldest_age,
             (SELECT count(*)::int FROM app_webhook_messages WHERE status IN ('pending', 'processing')) AS pending,
             (SELECT count(*)::int FROM app_webhook_messages WHERE status = 'failed') AS failed`.execute(db)
  ).rows[0];
  return { oldestPendingAgeSeconds: row?.oldest_age ?? 0, pending: row?.pending ?? 0, failed: row?.failed ?? 0 };
}
