-- The lots invariant's commit-time check (credit_lots_sum_trg, migration 0027), cheaper per
-- posting: the wallet's balance and its lots' sum in one statement instead of two, and the sum
-- over the lots that still hold tokens (remaining > 0: the draw-order index's rows, an empty lot
-- adds nothing) instead of every lot the user ever had. The same check, the same error.
--
-- Live-safe: CREATE OR REPLACE of the trigger's function only (no table touched; the trigger
-- calls the new body from the next firing on). Old replicas run no SQL of it.
CREATE OR REPLACE FUNCTION credit_lots_check_wallet_sum() RETURNS trigger
LANGUAGE plpgsql AS $$
DECLARE
  held bigint;
  lots bigint;
BEGIN
  SELECT (SELECT balance FROM wallets WHERE user_id = NEW.user_id),
         (SELECT coalesce(sum(remaining), 0) FROM credit_lots WHERE user_id = NEW.user_id AND remaining > 0)
    INTO held, lots;
  IF held IS DISTINCT FROM lots THEN
    RAISE EXCEPTION 'wallet % holds % tokens but its lots hold %', NEW.user_id, held, lots
      USING ERRCODE = 'check_violation', CONSTRAINT = 'credit_lots_sum_ck';
  END IF;
  RETURN NULL;
END;
$$;
