-- The engine the flows plug into: structured outcomes, scheduling on the row (backoff and
-- "retry later" both set next_attempt_at), bounded waiting, and replay history.

-- A stable machine code (filterable) next to the human detail. Codes are documented in
-- docs/outcomes.md; the detail is free text for people.
ALTER TABLE inbox_events RENAME COLUMN outcome TO outcome_detail;
ALTER TABLE inbox_events ADD COLUMN outcome_code text
  CONSTRAINT inbox_events_outcome_code_ck CHECK (outcome_code ~ '^[a-z][a-z0-9_]{0,63}$');

-- When the row may next be attempted: set by a failure's backoff or a handler's "retry later".
-- The relay does not re-enqueue a row before it is due.
ALTER TABLE inbox_events ADD COLUMN next_attempt_at timestamptz;
-- When the event first said "retry later" in its current wait; the wait is bounded from here.
ALTER TABLE inbox_events ADD COLUMN waiting_since timestamptz;
-- How many times the event deferred itself (never counted as failures).
ALTER TABLE inbox_events ADD COLUMN deferrals integer NOT NULL DEFAULT 0
  CONSTRAINT inbox_events_deferrals_ck CHECK (deferrals >= 0);
-- Operator replays of a finished event (each one re-runs the current handler).
ALTER TABLE inbox_events ADD COLUMN replays integer NOT NULL DEFAULT 0
  CONSTRAINT inbox_events_replays_ck CHECK (replays >= 0);
ALTER TABLE inbox_events ADD COLUMN replayed_at timestamptz;

UPDATE inbox_events SET outcome_code = CASE
  WHEN status = 'processed' THEN 'processed'
  WHEN status = 'ignored' THEN 'ignored'
  WHEN status = 'failed' THEN 'failed'
  ELSE NULL END;

CREATE INDEX inbox_events_outcome_code_idx ON inbox_events (outcome_code, id) WHERE outcome_code IS NOT NULL;
