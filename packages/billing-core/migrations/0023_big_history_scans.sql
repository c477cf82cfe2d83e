-- Two scans that read the whole table once the history is big (issue 21: bench/big-inbox.mjs,
-- EXPLAIN (ANALYZE, BUFFERS) of the hot statements on 10 million inbox and 10 million ledger rows,
-- docs/scaling.md "A big inbox"):
--
-- Reconciliation's look-back over the ledger (findStripeLedgerRowsWithoutEvent: Stripe ledger rows
-- created in the last days) filtered created_at with no index on it: a sequential scan of all 10
-- million rows, 850,581 buffers, 14 s, for a 3-day window. Ledger rows are appended in time
-- order and never changed (ledger_entries_append_only_trg), so created_at follows the table's
-- physical order and a BRIN index finds the window's pages: a few kilobytes of index, and almost
-- nothing to write per ledger row (only when autovacuum summarizes a filled range of pages).
-- Pages not summarized yet are always read, so rows just written are never missed.
CREATE INDEX ledger_entries_created_brin ON ledger_entries USING brin (created_at)
  WITH (autosummarize = on);

-- The console's event list filtered by type alone (listInboxEvents, newest first): no index
-- leads with type (inbox_events_status_idx leads with status and leaves processed rows out), so a
-- type with few or no rows was a sequential scan of all 10 million rows, 488,280 buffers, 14 s.
-- This index costs one more entry per stored event and one per finished one (the finish update
-- is never HOT): measured in docs/scaling.md.
CREATE INDEX inbox_events_type_idx ON inbox_events (type, id);
