-- Fills 0034's columns for lots voided or rolled over before it, then validates the four CHECKs
-- 0034 added NOT VALID, so Postgres vouches for every row, old ones included (the reference and
-- source limits are wider than the old ones; the counts start at 0 or at what this file computes,
-- within rollover_max). Live-safe: no ALTER before the updates, so they take row locks only and
-- postings go on (rollover and void lots are few); VALIDATE CONSTRAINT takes SHARE UPDATE
-- EXCLUSIVE, which lets reads and writes go on while it scans.

-- Voids before 0034: the lot's `lot:{id}:voided` entry says it was voided.
UPDATE credit_lots l SET voided_at = e.created_at, void_takes = 1
  FROM ledger_entries e
 WHERE e.reference = 'lot:' || l.id || ':voided' AND l.voided_at IS NULL;
-- Rollovers before 0034: what the rollover lot got is what the lot used of its allowance.
UPDATE credit_lots l SET rolled_over = least(r.amount, l.rollover_max)
  FROM credit_lots r
 WHERE r.source = 'lot:' || l.id || ':rollover' AND l.rolled_over = 0;

ALTER TABLE ledger_entries VALIDATE CONSTRAINT ledger_entries_reference_ck;
ALTER TABLE credit_lots VALIDATE CONSTRAINT credit_lots_source_ck;
ALTER TABLE credit_lots VALIDATE CONSTRAINT credit_lots_void_takes_ck;
ALTER TABLE credit_lots VALIDATE CONSTRAINT credit_lots_rolled_over_ck;
