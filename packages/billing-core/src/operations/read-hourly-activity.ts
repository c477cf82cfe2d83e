import { type Kysely, sql } from 'kysely';
import { type DB, providers } from '../db/schema';

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
 * statement. Each count goes through an index that bounds it to the hour or to a small state:
 *
 * - received: `inbox_events_received_idx (provider, received_at)`, one range per provider and hour;
 * - finished: `inbox_events_retention_idx (processed_at, id)`, whose predicate (body not pruned,
 *   processed or ignored) every row finished in the window meets, since retention keeps bodies at
 *   least a day (INBOX_RAW_BODY_RETENTION_DAYS ≥ 1);
 * - delivered: `app_webhook_messages_delivered_idx (delivered_at)`;
 * - parked and failed messages: the rows in that state now (`status = 'failed'`:
 *   `inbox_events_status_idx`, `app_webhook_messages_failed_idx`), grouped once by `updated_at`.
 *
 * The three big series are index-only counts per hour (no function of each row to compute), so no
 * scan grows with the tables' size: the cost follows the window's rows and the rows failed now.
 * The hours come from an integer series, whose row count the planner knows (it guesses a
 * timestamp series at 1,000 rows, an estimate big enough to JIT-compile the statement).
 */
export async function readHourlyActivity(db: Kysely<DB>): Promise<HourlyActivity[]> {
  const rows = await hourlyActivityQuery().execute(db);
  return rows.rows.map((row) => ({
    hour: row.hour,
    received: row.received,
    finished: row.finished,
    parked: row.parked,
    messagesDelivered: row.messages_delivered,
    messagesFailed: row.messages_failed,
  }));
}

/** The statement of readHourlyActivity (bench/console-overview.mjs EXPLAINs it on a big inbox). */
export function hourlyActivityQuery() {
  // A literal, not a parameter: the planner sees the series' length and each range's bound.
  const last = sql.lit(HOURLY_ACTIVITY_HOURS - 1);
  const since = sql`(date_trunc('hour', now()) - make_interval(hours => ${last}))`;
  return sql<{
    hour: Date;
    received: number;
    finished: number;
    parked: number;
    messages_delivered: number;
    messages_failed: number;
  }>`
    WITH parked AS MATERIALIZED (
      SELECT date_trunc('hour', e.updated_at) AS hour, count(*)::int AS n
        FROM inbox_events e
       WHERE e.status = 'failed' AND e.updated_at >= ${since}
       GROUP BY 1),
    failed AS MATERIALIZED (
      SELECT date_trunc('hour', m.updated_at) AS hour, count(*)::int AS n
        FROM app_webhook_messages m
       WHERE m.status = 'failed' AND m.updated_at >= ${since}
       GROUP BY 1),
    hours AS (
      SELECT date_trunc('hour', now()) - make_interval(hours => ${last} - i) AS hour
        FROM generate_series(0, ${last}) AS i)
    SELECT h.hour,
           (SELECT count(*)::int FROM inbox_events e
             WHERE e.provider IN (${sql.join(providers.map((provider) => sql.lit(provider)))})
               AND e.received_at >= h.hour AND e.received_at < h.hour + interval '1 hour') AS received,
           (SELECT count(*)::int FROM inbox_events e
             WHERE e.raw_body_pruned_at IS NULL AND e.status IN ('processed', 'ignored')
               AND e.processed_at >= h.hour AND e.processed_at < h.hour + interval '1 hour') AS finished,
           coalesce((SELECT parked.n FROM parked WHERE parked.hour = h.hour), 0) AS parked,
           (SELECT count(*)::int FROM app_webhook_messages m
             WHERE m.status = 'delivered'
               AND m.delivered_at >= h.hour AND m.delivered_at < h.hour + interval '1 hour') AS messages_delivered,
           coalesce((SELECT failed.n FROM failed WHERE failed.hour = h.hour), 0) AS messages_failed
      FROM hours h
     ORDER BY h.hour`;
}
