import { type Kysely, sql } from 'kysely';
import type { DB } from '../db/schema';

/** The hours the activity covers: the current (partial) hour and the 23 before it. */
export const HOURLY_ACTIVITY_HOURS = 24;

/** One hour of activity, counted from the rows' own timestamps. */
export interface HourlyActivity {
  /** The start of the hour (database clock). */
  hour: Date;
  /** Inbox events received (`received_at`), every provider. */
  received: number;
  /** Inbox events finished (processed or ignored) in the hour (`processed_at`). */
  finished: number;
  /** Inbox events parked now, by the hour they parked (their `updated_at`; a requeued one is no longer counted). */
  parked: number;
  /** App-webhook messages delivered (`delivered_at`; until retention deletes them, at least a day). */
  messagesDelivered: number;
  /** App-webhook messages failed now, by the hour they failed (their `updated_at`). */
  messagesFailed: number;
}

/**
 * The last 24 hours of the inbox and the outbox, hour by hour, for the console's small charts:
 * history without a time-series store, read from timestamps the rows already carry, in one
 * statement, each count through an index that bounds it to the window or to a small state:
 *
 * - received: `inbox_events_received_idx (provider, received_at)`, one range per provider;
 * - finished: `inbox_events_retention_idx (processed_at, id)`, whose predicate (body not pruned,
 *   processed or ignored) every row finished in the window meets, since retention keeps bodies at
 *   least a day (INBOX_RAW_BODY_RETENTION_DAYS ≥ 1);
 * - parked: the `status = 'failed'` part of `inbox_events_status_idx` (parked rows only);
 * - delivered: `app_webhook_messages_delivered_idx (delivered_at)`;
 * - failed messages: `app_webhook_messages_failed_idx` (failed rows only).
 *
 * No scan grows with the inbox's size: the costs grow with the window's rows and with the number
 * of rows parked or failed now (which the metrics' gauges already count the same way).
 */
export async function readHourlyActivity(db: Kysely<DB>): Promise<HourlyActivity[]> {
  // A stable expression (not a parameter joined in), so each range is an index bound.
  const since = sql`(date_trunc('hour', now()) - make_interval(hours => ${HOURLY_ACTIVITY_HOURS - 1}))`;
  const rows = await sql<{
    hour: Date;
    received: number;
    finished: number;
    parked: number;
    messages_delivered: number;
    messages_failed: number;
  }>`
    WITH received AS (
      SELECT date_trunc('hour', e.received_at) AS hour, count(*)::int AS n
        FROM inbox_events e
       WHERE e.provider IN ('stripe', 'revenuecat') AND e.received_at >= ${since}
       GROUP BY 1),
    finished AS (
      SELECT date_trunc('hour', e.processed_at) AS hour, count(*)::int AS n
        FROM inbox_events e
       WHERE e.raw_body_pruned_at IS NULL AND e.status IN ('processed', 'ignored')
         AND e.processed_at >= ${since}
       GROUP BY 1),
    parked AS (
      SELECT date_trunc('hour', e.updated_at) AS hour, count(*)::int AS n
        FROM inbox_events e
       WHERE e.status = 'failed' AND e.updated_at >= ${since}
       GROUP BY 1),
    delivered AS (
      SELECT date_trunc('hour', m.delivered_at) AS hour, count(*)::int AS n
        FROM app_webhook_messages m
       WHERE m.status = 'delivered' AND m.delivered_at >= ${since}
       GROUP BY 1),
    failed AS (
      SELECT date_trunc('hour', m.updated_at) AS hour, count(*)::int AS n
        FROM app_webhook_messages m
       WHERE m.status = 'failed' AND m.updated_at >= ${since}
       GROUP BY 1)
    SELECT h.hour,
           coalesce(received.n, 0) AS received,
           coalesce(finished.n, 0) AS finished,
           coalesce(parked.n, 0) AS parked,
           coalesce(delivered.n, 0) AS messages_delivered,
           coalesce(failed.n, 0) AS messages_failed
      FROM generate_series(${since}, date_trunc('hour', now()), interval '1 hour') AS h(hour)
      LEFT JOIN received ON received.hour = h.hour
      LEFT JOIN finished ON finished.hour = h.hour
      LEFT JOIN parked ON parked.hour = h.hour
      LEFT JOIN delivered ON delivered.hour = h.hour
      LEFT JOIN failed ON failed.hour = h.hour
     ORDER BY h.hour`.execute(db);
  return rows.rows.map((row) => ({
    hour: row.hour,
    received: row.received,
    finished: row.finished,
    parked: row.parked,
    messagesDelivered: row.messages_delivered,
    messagesFailed: row.messages_failed,
  }));
}
