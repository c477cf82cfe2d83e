-- Refunds of token packs: what was credited, what could be taken back (never below zero), and the
-- shortfall, visible to support. One row per provider refund; the unique key is the fence that
-- makes a redelivered or replayed refund take nothing the second time.
CREATE TABLE token_refunds (
  id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  provider text NOT NULL CONSTRAINT token_refunds_provider_ck CHECK (provider IN ('stripe', 'revenuecat')),
  -- RevenueCat: the store transaction id of the refunded purchase; Stripe: the refund or charge id.
  provider_refund_id text NOT NULL CONSTRAINT token_refunds_provider_refund_id_ck
    CHECK (length(provider_refund_id) BETWEEN 1 AND 255),
  user_id text NOT NULL CONSTRAINT token_refunds_user_fk REFERENCES users (id),
  pack_id text NOT NULL,
  -- The ledger entry that credited the pack and that this refund reverses.
  credit_reference text NOT NULL,
  tokens_credited bigint NOT NULL CONSTRAINT token_refunds_credited_ck CHECK (tokens_credited > 0),
  tokens_taken bigint NOT NULL CONSTRAINT token_refunds_taken_ck CHECK (tokens_taken >= 0),
  shortfall bigint GENERATED ALWAYS AS (tokens_credited - tokens_taken) STORED,
  inbox_event_id bigint CONSTRAINT token_refunds_inbox_event_fk REFERENCES inbox_events (id),
  created_at timestamptz NOT NULL DEFAULT now(),
  CONSTRAINT token_refunds_provider_refund_uq UNIQUE (provider, provider_refund_id),
  CONSTRAINT token_refunds_taken_le_credited_ck CHECK (tokens_taken <= tokens_credited)
);

CREATE INDEX token_refunds_user_idx ON token_refunds (user_id, id);
