-- Operations: where an inbox row came from (a webhook, or Stripe reconciliation's backfill from
-- the Events API), and retention of raw bodies (pruned after INBOX_RAW_BODY_RETENTION_DAYS; the
-- row, its ids and outcome stay, the ledger is never touched).

ALTER TABLE inbox_events ADD COLUMN source text NOT NULL DEFAULT 'webhook'
  CONSTRAINT inbox_events_source_ck CHECK (source IN ('webhook', 'backfill'));

-- A pruned row has no raw body, and says when it lost it. Only finished rows may be pruned.
ALTER TABLE inbox_events ALTER COLUMN raw_body DROP NOT NULL;
ALTER TABLE inbox_events ADD COLUMN raw_body_pruned_at timestamptz;
ALTER TABLE inbox_events ADD CONSTRAINT inbox_events_raw_body_ck
  CHECK ((raw_body IS NULL) = (raw_body_pruned_at IS NOT NULL));
ALTER TABLE inbox_events ADD CONSTRAINT inbox_events_pruned_finished_ck
  CHECK (raw_body_pruned_at IS NULL OR status IN ('processed', 'ignored'));

-- The retention loop's scan: finished rows that still hold their body, oldest first.
CREATE INDEX inbox_events_retention_idx ON inbox_events (processed_at, id)
  WHERE raw_body_pruned_at IS NULL AND status IN ('processed', 'ignored');
-- Reconciliation reads the Stripe rows of a window.
CREATE INDEX inbox_events_received_idx ON inbox_events (provider, received_at);
