-- The money holes of issue 53, at the schema's depth (docs/lots.md "Voids", "Expiry and rollover").
--
-- 1. A void is a standing state of its lot: `voided_at` says since when, `void_takes` how many
--    entries it has taken (`lot:{lotId}:voided`, then `lot:{lotId}:voided:{n}` for tokens that came
--    back to it later: a hold on it released or lapsed, a give-back).
-- 2. A lot remembers what of its rollover allowance it used (`rolled_over`, at most rollover_max):
--    tokens it frees after its expiry (a hold released, a late give-back) still roll over up to
--    rollover_max. Lots that rolled over before this migration get what their rollover lot holds.
-- 3. A draw remembers its place in the entry's draws (`position`), so a give-back returns tokens in
--    the order they were drawn. Draws written before this migration have none (ordered by lot id,
--    as before).
-- 4. References and lot sources built from an outside id (up to 255 characters each: a store
--    transaction, a user, an event) fit: up to 512 characters (2 KB in UTF-8, under the b-tree's
--    entry limit of 2.7 KB), so no id the inbox accepted can make a later refund, lot or entry fail.
--
-- Live-safe: new columns are nullable or have constant defaults (metadata only); old code never
-- writes them (NULL position, 0 counts: what old code meant). The widened CHECKs replace the old
-- ones NOT VALID (no scan under the exclusive lock; 0035 validates them under SHARE UPDATE
-- EXCLUSIVE). ALTER TABLE holds ACCESS EXCLUSIVE for an instant; lock_timeout keeps it from queueing
-- the postings behind a long read: then this migration fails whole and `tally migrate` runs again.
SET LOCAL lock_timeout = '5s';

ALTER TABLE credit_lots ADD COLUMN voided_at timestamptz;
ALTER TABLE credit_lots ADD COLUMN void_takes integer NOT NULL DEFAULT 0;
ALTER TABLE credit_lots ADD COLUMN rolled_over bigint NOT NULL DEFAULT 0;
ALTER TABLE credit_lots ADD CONSTRAINT credit_lots_void_takes_ck CHECK (void_takes >= 0) NOT VALID;
ALTER TABLE credit_lots ADD CONSTRAINT credit_lots_rolled_over_ck CHECK (rolled_over >= 0 AND rolled_over <= rollover_max) NOT VALID;

ALTER TABLE ledger_draws ADD COLUMN position integer;

ALTER TABLE ledger_entries DROP CONSTRAINT ledger_entries_reference_ck;
-- guard: long-outside-ids
ALTER TABLE ledger_entries ADD CONSTRAINT ledger_entries_reference_ck CHECK (length(reference) BETWEEN 1 AND 512) NOT VALID;
ALTER TABLE credit_lots DROP CONSTRAINT credit_lots_source_ck;
ALTER TABLE credit_lots ADD CONSTRAINT credit_lots_source_ck CHECK (length(source) BETWEEN 1 AND 512) NOT VALID;
