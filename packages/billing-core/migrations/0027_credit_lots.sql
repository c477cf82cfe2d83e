-- Credits that expire (docs/lots.md): every credit creates a lot, every debit draws from lots and
-- records what it drew beside its ledger entry. Forward-only and frozen once landed.
--
-- Live safety: this migration only creates two empty tables, their indexes and triggers (no
-- rewrite, no backfill, no lock on wallets or ledger_entries beyond the brief ones CREATE TRIGGER
-- and the foreign keys take). Balances that exist before lots get their opening lot lazily, on the
-- first posting of the new code under the wallet's row lock (lot:opening:{userId}), or in batches
-- (openMissingLots). Old code still running for a moment posts ledger entries without lots: it
-- never writes credit_lots, so the invariant trigger below never fires for its commits; the new
-- code closes the gap it left at the wallet's next posting.

CREATE TABLE credit_lots (
  id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  user_id text NOT NULL CONSTRAINT credit_lots_wallet_fk REFERENCES wallets (user_id),
  category text NOT NULL
    CONSTRAINT credit_lots_category_ck CHECK (category IN ('purchased', 'subscription', 'promotional')),
  -- The ledger reference that created the lot (lot:opening:{userId} for a balance from before lots).
  source text NOT NULL CONSTRAINT credit_lots_source_ck CHECK (length(source) BETWEEN 1 AND 255),
  amount bigint NOT NULL CONSTRAINT credit_lots_amount_ck CHECK (amount > 0),
  remaining bigint NOT NULL CONSTRAINT credit_lots_remaining_ck CHECK (remaining >= 0 AND remaining <= amount),
  -- NULL: never expires.
  expires_at timestamptz,
  -- The draw order's second key: promotional before subscription before purchased.
  draw_rank smallint GENERATED ALWAYS AS (
    CASE category WHEN 'promotional' THEN 0 WHEN 'subscription' THEN 1 ELSE 2 END) STORED NOT NULL,
  created_at timestamptz NOT NULL DEFAULT now(),
  CONSTRAINT credit_lots_source_uq UNIQUE (source)
);

-- The draw order over the lots that still hold tokens: soonest expiry first (never last), then
-- the category's rank, then the oldest.
CREATE INDEX credit_lots_draw_order_idx ON credit_lots (user_id, expires_at NULLS LAST, draw_rank, id)
  WHERE remaining > 0;
CREATE INDEX credit_lots_user_idx ON credit_lots (user_id, id);

-- What each ledger entry moved between lots: a debit's draws list what it took from each lot, a
-- give-back's what it returned. amount is positive; its direction is the entry's sign.
CREATE TABLE ledger_draws (
  ledger_entry_id bigint NOT NULL CONSTRAINT ledger_draws_entry_fk REFERENCES ledger_entries (id),
  lot_id bigint NOT NULL CONSTRAINT ledger_draws_lot_fk REFERENCES credit_lots (id),
  amount bigint NOT NULL CONSTRAINT ledger_draws_amount_ck CHECK (amount > 0),
  CONSTRAINT ledger_draws_pk PRIMARY KEY (ledger_entry_id, lot_id)
);
CREATE INDEX ledger_draws_lot_idx ON ledger_draws (lot_id);

-- Draws are facts like the entries they belong to; lots are never removed (only remaining moves).
CREATE TRIGGER ledger_draws_append_only_trg
  BEFORE UPDATE OR DELETE ON ledger_draws
  FOR EACH ROW EXECUTE FUNCTION ledger_entries_reject_change();
CREATE TRIGGER ledger_draws_no_truncate_trg
  BEFORE TRUNCATE ON ledger_draws
  FOR EACH STATEMENT EXECUTE FUNCTION ledger_entries_reject_change();

CREATE FUNCTION credit_lots_reject_removal() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
  RAISE EXCEPTION 'credit lots are never removed (% rejected)', TG_OP
    USING ERRCODE = 'restrict_violation';
END;
$$;
CREATE TRIGGER credit_lots_no_delete_trg
  BEFORE DELETE ON credit_lots
  FOR EACH ROW EXECUTE FUNCTION credit_lots_reject_removal();
CREATE TRIGGER credit_lots_no_truncate_trg
  BEFORE TRUNCATE ON credit_lots
  FOR EACH STATEMENT EXECUTE FUNCTION credit_lots_reject_removal();

-- A wallet with lots holds exactly the sum of its lots' remaining, checked at COMMIT for every
-- wallet whose lots the transaction touched (deferred: within the transaction the ledger entry
-- moves the balance first, then the lots follow). Only a transaction that writes lots is checked,
-- so the commits of old code (which posts entries without lots) never fail; ledger verify checks
-- every wallet.
CREATE FUNCTION credit_lots_check_wallet_sum() RETURNS trigger
LANGUAGE plpgsql AS $$
DECLARE
  held bigint;
  lots bigint;
BEGIN
  SELECT balance INTO held FROM wallets WHERE user_id = NEW.user_id;
  SELECT coalesce(sum(remaining), 0) INTO lots FROM credit_lots WHERE user_id = NEW.user_id;
  IF held IS DISTINCT FROM lots THEN
    RAISE EXCEPTION 'wallet % holds % tokens but its lots hold %', NEW.user_id, held, lots
      USING ERRCODE = 'check_violation', CONSTRAINT = 'credit_lots_sum_ck';
  END IF;
  RETURN NULL;
END;
$$;
CREATE CONSTRAINT TRIGGER credit_lots_sum_trg
  AFTER INSERT OR UPDATE ON credit_lots
  DEFERRABLE INITIALLY DEFERRED
  FOR EACH ROW EXECUTE FUNCTION credit_lots_check_wallet_sum();

-- When the lot an installment grants expires (NULL: never): for a price with
-- "creditsExpire": "period_end", when the next installment is due (the last: a month after its
-- own). A nullable column without a default: a catalog-only change, no table rewrite.
ALTER TABLE stripe_installments ADD COLUMN lot_expires_at timestamptz;
