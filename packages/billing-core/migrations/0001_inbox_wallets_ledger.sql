-- Tally's system of record: the webhook inbox, users, wallets and the append-only ledger.
-- Forward-only and frozen once landed: change the schema in a new numbered file.

CREATE TABLE inbox_events (
  id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  provider text NOT NULL
    CONSTRAINT inbox_events_provider_ck CHECK (provider IN ('stripe', 'revenuecat')),
  provider_event_id text NOT NULL
    CONSTRAINT inbox_events_provider_event_id_ck CHECK (length(provider_event_id) BETWEEN 1 AND 255),
  type text NOT NULL,
  livemode boolean,
  environment text,
  user_id text,
  provider_customer_id text,
  provider_subscription_id text,
  provider_payment_intent_id text,
  provider_invoice_id text,
  raw_body text NOT NULL,
  status text NOT NULL DEFAULT 'received'
    CONSTRAINT inbox_events_status_ck
    CHECK (status IN ('received', 'processing', 'processed', 'failed', 'ignored')),
  attempts integer NOT NULL DEFAULT 0 CONSTRAINT inbox_events_attempts_ck CHECK (attempts >= 0),
  last_error text,
  outcome text,
  received_at timestamptz NOT NULL DEFAULT now(),
  -- When the id was last handed to the queue; NULL means "never, or the hand-off failed":
  -- the relay enqueues such rows again.
  enqueued_at timestamptz,
  processed_at timestamptz,
  updated_at timestamptz NOT NULL DEFAULT now(),
  CONSTRAINT inbox_events_provider_event_uq UNIQUE (provider, provider_event_id)
);

CREATE INDEX inbox_events_user_idx ON inbox_events (user_id, id) WHERE user_id IS NOT NULL;
CREATE INDEX inbox_events_customer_idx ON inbox_events (provider_customer_id)
  WHERE provider_customer_id IS NOT NULL;
CREATE INDEX inbox_events_subscription_idx ON inbox_events (provider_subscription_id)
  WHERE provider_subscription_id IS NOT NULL;
CREATE INDEX inbox_events_payment_intent_idx ON inbox_events (provider_payment_intent_id)
  WHERE provider_payment_intent_id IS NOT NULL;
CREATE INDEX inbox_events_invoice_idx ON inbox_events (provider_invoice_id)
  WHERE provider_invoice_id IS NOT NULL;
-- The relay scans only rows that still need work; this stays small however large the inbox grows.
CREATE INDEX inbox_events_pending_idx ON inbox_events (id)
  WHERE status IN ('received', 'processing');
CREATE INDEX inbox_events_status_idx ON inbox_events (status, provider, type, id);

CREATE TABLE users (
  id text PRIMARY KEY CONSTRAINT users_id_ck CHECK (length(id) BETWEEN 1 AND 255),
  created_at timestamptz NOT NULL DEFAULT now()
);

CREATE TABLE wallets (
  user_id text PRIMARY KEY CONSTRAINT wallets_user_fk REFERENCES users (id),
  balance bigint NOT NULL DEFAULT 0 CONSTRAINT wallets_balance_nonnegative_ck CHECK (balance >= 0),
  created_at timestamptz NOT NULL DEFAULT now(),
  updated_at timestamptz NOT NULL DEFAULT now()
);

CREATE TABLE ledger_entries (
  id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  user_id text NOT NULL CONSTRAINT ledger_entries_wallet_fk REFERENCES wallets (user_id),
  reference text NOT NULL CONSTRAINT ledger_entries_reference_ck CHECK (length(reference) BETWEEN 1 AND 255),
  amount bigint NOT NULL CONSTRAINT ledger_entries_amount_nonzero_ck CHECK (amount <> 0),
  balance_before bigint NOT NULL CONSTRAINT ledger_entries_balance_before_ck CHECK (balance_before >= 0),
  balance_after bigint NOT NULL CONSTRAINT ledger_entries_balance_after_ck CHECK (balance_after >= 0),
  reason text NOT NULL,
  inbox_event_id bigint CONSTRAINT ledger_entries_inbox_event_fk REFERENCES inbox_events (id),
  created_at timestamptz NOT NULL DEFAULT now(),
  CONSTRAINT ledger_entries_reference_uq UNIQUE (reference),
  CONSTRAINT ledger_entries_arithmetic_ck CHECK (balance_after = balance_before + amount)
);

CREATE INDEX ledger_entries_user_idx ON ledger_entries (user_id, id);
CREATE INDEX ledger_entries_inbox_event_idx ON ledger_entries (inbox_event_id)
  WHERE inbox_event_id IS NOT NULL;

-- Ledger rows are facts: they are never edited or removed.
CREATE FUNCTION ledger_entries_reject_change() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
  RAISE EXCEPTION 'ledger entries are append-only (% rejected)', TG_OP
    USING ERRCODE = 'restrict_violation';
END;
$$;

CREATE TRIGGER ledger_entries_append_only_trg
  BEFORE UPDATE OR DELETE ON ledger_entries
  FOR EACH ROW EXECUTE FUNCTION ledger_entries_reject_change();

CREATE TRIGGER ledger_entries_no_truncate_trg
  BEFORE TRUNCATE ON ledger_entries
  FOR EACH STATEMENT EXECUTE FUNCTION ledger_entries_reject_change();

-- Every ledger row moves its wallet from balance_before to balance_after. The update only
-- matches when the wallet still holds balance_before, so a writer that did not lock the wallet
-- (or computed the wrong balance) fails instead of silently drifting from the sum of entries.
CREATE FUNCTION ledger_entries_apply_to_wallet() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
  UPDATE wallets
     SET balance = NEW.balance_after, updated_at = now()
   WHERE user_id = NEW.user_id AND balance = NEW.balance_before;
  IF NOT FOUND THEN
    RAISE EXCEPTION 'ledger entry % expects wallet % at balance %, which it does not hold',
      NEW.reference, NEW.user_id, NEW.balance_before
      USING ERRCODE = 'serialization_failure';
  END IF;
  RETURN NULL;
END;
$$;

CREATE TRIGGER ledger_entries_apply_to_wallet_trg
  AFTER INSERT ON ledger_entries
  FOR EACH ROW EXECUTE FUNCTION ledger_entries_apply_to_wallet();

-- A wallet's balance is a cache of its ledger: it starts at zero and only the ledger trigger
-- above (trigger depth 2) may change it.
CREATE FUNCTION wallets_guard_balance() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
  IF TG_OP = 'INSERT' AND NEW.balance <> 0 THEN
    RAISE EXCEPTION 'a wallet starts at balance 0; credit it through the ledger'
      USING ERRCODE = 'restrict_violation';
  END IF;
  IF TG_OP = 'UPDATE' AND NEW.balance IS DISTINCT FROM OLD.balance AND pg_trigger_depth() < 2 THEN
    RAISE EXCEPTION 'wallet balances change only through ledger entries'
      USING ERRCODE = 'restrict_violation';
  END IF;
  IF TG_OP = 'DELETE' THEN
    RAISE EXCEPTION 'wallets are never deleted' USING ERRCODE = 'restrict_violation';
  END IF;
  RETURN CASE WHEN TG_OP = 'DELETE' THEN OLD ELSE NEW END;
END;
$$;

CREATE TRIGGER wallets_guard_balance_trg
  BEFORE INSERT OR UPDATE OR DELETE ON wallets
  FOR EACH ROW EXECUTE FUNCTION wallets_guard_balance();
