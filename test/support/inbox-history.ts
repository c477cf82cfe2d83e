import type { DB } from '@tally/billing-core';
import { type Kysely, sql } from 'kysely';

/** One committed change of an inbox row, as a trigger in the test's own database recorded it. */
export interface InboxChange {
  status: string;
  attempts: number;
  deferrals: number;
  outcomeCode: string | null;
  /** When the change's transaction ran, on the database clock (`now()`, as the engine's own writes). */
  at: Date;
  /** When the row is due again (set by a failure or a "retry later"), or null. */
  nextAttemptAt: Date | null;
}

/**
 * Starts recording every update of `inbox_events` in the test's own database (a trigger writes
 * each new row state to `test_inbox_history`), so a test can check the order of what happened
 * to a row (claimed, deferred, failed, claimed again) from the database's own timestamps instead
 * of the test's wall clock. Idempotent.
 */
export async function recordInboxHistory(db: Kysely<DB>): Promise<void> {
  await sql`
    CREATE TABLE IF NOT EXISTS test_inbox_history (
      seq bigserial PRIMARY KEY,
      inbox_event_id bigint NOT NULL,
      status text NOT NULL,
      attempts integer NOT NULL,
      deferrals integer NOT NULL,
      outcome_code text,
      next_attempt_at timestamptz,
      at timestamptz NOT NULL DEFAULT now()
    )`.execute(db);
  await sql`
    CREATE OR REPLACE FUNCTION test_record_inbox_change() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN
      INSERT INTO test_inbox_history (inbox_event_id, status, attempts, deferrals, outcome_code, next_attempt_at)
      VALUES (NEW.id, NEW.status, NEW.attempts, NEW.deferrals, NEW.outcome_code, NEW.next_attempt_at);
      RETURN NEW;
    END $$`.execute(db);
  await sql`
    CREATE OR REPLACE TRIGGER test_record_inbox_change AFTER UPDATE ON inbox_events
    FOR EACH ROW EXECUTE FUNCTION test_record_inbox_change()`.execute(db);
}

/** The recorded changes of one inbox row, in the order they were made (row locks serialize them). */
export async function inboxHistoryOf(db: Kysely<DB>, inboxEventId: number): Promise<InboxChange[]> {
  const { rows } = await sql<{
    status: string;
    attempts: number;
    deferrals: number;
    outcome_code: string | null;
    at: Date;
    next_attempt_at: Date | null;
  }>`SELECT status, attempts, deferrals, outcome_code, at, next_attempt_at
       FROM test_inbox_history WHERE inbox_event_id = ${inboxEventId} ORDER BY seq`.execute(db);
  return rows.map((row) => ({
    status: row.status,
    attempts: row.attempts,
    deferrals: row.deferrals,
    outcomeCode: row.outcome_code,
    at: row.at,
    nextAttemptAt: row.next_attempt_at,
  }));
}

/**
 * The claims (a change to `processing`) that ran before the time the change before them had
 * scheduled the row for: a retry that did not wait for its backoff or its "retry later" delay.
 * Empty when every retry waited; also lists schedules that were not after the change that set them.
 */
export function retriesBeforeDue(history: readonly InboxChange[]): string[] {
  const early: string[] = [];
  history.forEach((change, index) => {
    if (change.nextAttemptAt && change.nextAttemptAt <= change.at) {
      early.push(
        `change ${index} (${change.status}) scheduled the row for ${change.nextAttemptAt.toISOString()}, not after itself (${change.at.toISOString()})`,
      );
    }
    const previous = history[index - 1];
    if (change.status === 'processing' && previous?.nextAttemptAt && change.at < previous.nextAttemptAt) {
      early.push(
        `claim ${index} at ${change.at.toISOString()} before the row was due at ${previous.nextAttemptAt.toISOString()}`,
      );
    }
  });
  return early;
}
