-- Fewer index writes per finished event (issue 22). Finishing an inbox row changes indexed
-- columns (status, outcome_code, processed_at), so the update is never HOT: it writes an entry
-- into every index whose predicate the finished row satisfies. Two of those served only the
-- operators' filters, and the normal end state (processed, credited) is the bulk of the table:
-- a filter on it walks the primary key backwards and finds its page of rows at once (EXPLAIN on
-- 100k rows: 4 blocks), so those two indexes now leave the bulk out. A finished, credited
-- event writes 7 index entries instead of 9 (a 1,600-event smoke drain: about 260 WAL bytes less
-- per event). The rarer states and codes (failed, ignored, received, processing; every other
-- code) stay indexed as before, and so do the relay's, the retention loop's and reconciliation's
-- scans (their own indexes). What costs more: a filter that combines status = 'processed' with a
-- rare provider or type now walks the primary key too.

DROP INDEX inbox_events_status_idx;
CREATE INDEX inbox_events_status_idx ON inbox_events (status, provider, type, id)
  WHERE status <> 'processed';

DROP INDEX inbox_events_outcome_code_idx;
CREATE INDEX inbox_events_outcome_code_idx ON inbox_events (outcome_code, id)
  WHERE outcome_code IS NOT NULL AND outcome_code <> 'credited';
