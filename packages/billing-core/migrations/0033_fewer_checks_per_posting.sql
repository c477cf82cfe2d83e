-- Fewer checks per posting, none of the guarantees weaker (issue 36). A CPU profile of Postgres
-- draining RevenueCat packs (perf with call graphs, 2026-12-04, bench/experiments.md "Checks per
-- posting") put about 10 % of its time in foreign-key checks (each one an SPI query per written
-- row) and 7.5 % in plpgsql trigger calls. Some of those checks guard nothing another guard does
-- not already hold:
--
-- 1. Every reference to an inbox event (ledger entries, payments, links, pack claims, refunds,
--    disputes, subscription history) names the row the engine read under its lock: provenance.
--    The foreign keys' one remaining use was to refuse deleting an inbox row that something
--    names. Inbox rows are never deleted (retention prunes raw bodies and keeps the rows; the
--    ledger is never touched), and now the table refuses DELETE and TRUNCATE outright, as the
--    ledger does. Dropped: up to three checks per credit, each also locking the inbox row
--    (FOR KEY SHARE). The indexes on those columns stay (look-ups use them).
-- 2. credit_lots -> wallets: the deferred sum trigger (credit_lots_sum_trg) already fails the
--    commit of a lot whose wallet does not exist (the balance it reads is NULL, never equal to
--    the lots' sum), and wallets are never deleted (wallets_guard_balance). Dropped: one check
--    per credit.
-- 3. wallets_guard_balance was called (plpgsql) on every wallet write, so on every posting's
--    balance move, to decide it had nothing to refuse. Its refusals are now the triggers' WHEN
--    conditions, and it is called only to refuse: a new wallet with money in it, a balance moved
--    outside a ledger insert's trigger (`pg_trigger_depth()` is 0 while a WHEN condition of a
--    statement of the client's own is evaluated, 1 inside ledger_entries_apply_to_wallet; the
--    function, one call deeper, tested `< 2`), and any DELETE. The UPDATE trigger keeps the old
--    name, which tests disable to simulate drift.
--
-- Measured (BENCH_TEMPLATE_SQL variants of the RevenueCat drain, same build): Postgres 0.69-0.70
-- ms per event before, 0.58-0.59 after; 1,580 events/s before, 1,780-1,840 after.
--
-- Live-safe: replicas of the previous release never delete inbox rows and write the same rows.
-- Each ALTER holds ACCESS EXCLUSIVE on its tables for an instant; lock_timeout keeps it from
-- queueing ingest's inserts behind a long read (then the migration fails whole and `tally
-- migrate` is run again).
SET LOCAL lock_timeout = '5s';

ALTER TABLE ledger_entries DROP CONSTRAINT ledger_entries_inbox_event_fk;
ALTER TABLE user_aliases DROP CONSTRAINT user_aliases_inbox_event_fk;
ALTER TABLE subscription_history DROP CONSTRAINT subscription_history_inbox_event_fk;
ALTER TABLE payments DROP CONSTRAINT payments_inbox_event_fk;
ALTER TABLE token_refunds DROP CONSTRAINT token_refunds_inbox_event_fk;
ALTER TABLE stripe_disputes DROP CONSTRAINT stripe_disputes_withdrawn_event_fk;
ALTER TABLE stripe_disputes DROP CONSTRAINT stripe_disputes_reinstated_event_fk;
ALTER TABLE revenuecat_pack_transactions DROP CONSTRAINT revenuecat_pack_transactions_inbox_event_fk;

CREATE FUNCTION inbox_events_reject_removal() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
  RAISE EXCEPTION 'inbox events are never removed (% rejected); retention prunes raw bodies only', TG_OP
    USING ERRCODE = 'restrict_violation';
END;
$$;
-- Statement-level: refuses any DELETE (even of no row) at no cost to inserts and updates.
CREATE TRIGGER inbox_events_no_delete_trg
  BEFORE DELETE ON inbox_events
  FOR EACH STATEMENT EXECUTE FUNCTION inbox_events_reject_removal();
CREATE TRIGGER inbox_events_no_truncate_trg
  BEFORE TRUNCATE ON inbox_events
  FOR EACH STATEMENT EXECUTE FUNCTION inbox_events_reject_removal();

ALTER TABLE credit_lots DROP CONSTRAINT credit_lots_wallet_fk;

DROP TRIGGER wallets_guard_balance_trg ON wallets;
CREATE TRIGGER wallets_guard_balance_trg
  BEFORE UPDATE ON wallets
  FOR EACH ROW WHEN (NEW.balance IS DISTINCT FROM OLD.balance AND pg_trigger_depth() < 1)
  EXECUTE FUNCTION wallets_guard_balance();
CREATE TRIGGER wallets_guard_insert_trg
  BEFORE INSERT ON wallets
  FOR EACH ROW WHEN (NEW.balance <> 0)
  EXECUTE FUNCTION wallets_guard_balance();
CREATE TRIGGER wallets_guard_delete_trg
  BEFORE DELETE ON wallets
  FOR EACH ROW EXECUTE FUNCTION wallets_guard_balance();
