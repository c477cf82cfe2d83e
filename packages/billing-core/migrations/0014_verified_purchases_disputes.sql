-- Money at the provider edge (issue 19).

-- RevenueCat token packs credited after RevenueCat's REST read listed the purchase
-- (`non_subscriptions[product][].store_transaction_id`). One row per store transaction: a second
-- event naming a transaction already credited (a forged body with a new event id reusing a real
-- transaction) credits nothing.
CREATE TABLE revenuecat_verified_purchases (
  store_transaction_id text PRIMARY KEY
    CONSTRAINT revenuecat_verified_purchases_transaction_ck CHECK (length(store_transaction_id) BETWEEN 1 AND 255),
  user_id text NOT NULL CONSTRAINT revenuecat_verified_purchases_user_fk REFERENCES users (id),
  product_id text NOT NULL,
  ledger_reference text NOT NULL,
  inbox_event_id bigint NOT NULL CONSTRAINT revenuecat_verified_purchases_inbox_event_fk REFERENCES inbox_events (id),
  created_at timestamptz NOT NULL DEFAULT now()
);

-- Stripe chargebacks. A row is written when Stripe withdraws the funds (the fence: one
-- withdrawal per dispute) and updated once when it reinstates them. `tokens_owed` is what the
-- disputed payment had granted and no refund had already taken back; `tokens_taken` what the
-- wallet held of it (never below zero); the rest is the shortfall, shown in the support view. A
-- reinstatement gives back exactly `tokens_taken`.
CREATE TABLE stripe_disputes (
  dispute_id text PRIMARY KEY CONSTRAINT stripe_disputes_dispute_id_ck CHECK (length(dispute_id) BETWEEN 1 AND 255),
  payment_id bigint NOT NULL CONSTRAINT stripe_disputes_payment_fk REFERENCES payments (id),
  user_id text NOT NULL CONSTRAINT stripe_disputes_user_fk REFERENCES users (id),
  charge_id text,
  -- Stripe's dispute status as last read (needs_response, under_review, won, lost, ...).
  status text NOT NULL,
  tokens_owed bigint NOT NULL CONSTRAINT stripe_disputes_owed_ck CHECK (tokens_owed >= 0),
  tokens_taken bigint NOT NULL CONSTRAINT stripe_disputes_taken_ck CHECK (tokens_taken >= 0),
  shortfall bigint GENERATED ALWAYS AS (tokens_owed - tokens_taken) STORED,
  tokens_reinstated bigint NOT NULL DEFAULT 0 CONSTRAINT stripe_disputes_reinstated_ck CHECK (tokens_reinstated >= 0),
  withdrawn_inbox_event_id bigint CONSTRAINT stripe_disputes_withdrawn_event_fk REFERENCES inbox_events (id),
  reinstated_inbox_event_id bigint CONSTRAINT stripe_disputes_reinstated_event_fk REFERENCES inbox_events (id),
  withdrawn_at timestamptz NOT NULL DEFAULT now(),
  reinstated_at timestamptz,
  CONSTRAINT stripe_disputes_taken_le_owed_ck CHECK (tokens_taken <= tokens_owed),
  CONSTRAINT stripe_disputes_reinstated_exact_ck CHECK (
    (reinstated_at IS NULL AND tokens_reinstated = 0) OR (reinstated_at IS NOT NULL AND tokens_reinstated = tokens_taken))
);
CREATE INDEX stripe_disputes_user_idx ON stripe_disputes (user_id);
CREATE INDEX stripe_disputes_payment_idx ON stripe_disputes (payment_id);

-- Which dispute voided an installment, so a reinstatement can schedule it again.
ALTER TABLE stripe_installments ADD COLUMN voided_by_dispute_id text;

-- Shortfalls of take-backs (refunds, chargebacks) that found part of the tokens already out of
-- the wallet. `last_ledger_entry_id` is the user's latest ledger entry when the take-back ran: a
-- studio debit at or before it was in flight then, so if its generation later fails, its refund
-- hands back tokens the take-back could not take, and they settle this shortfall first
-- (`recovered`) instead of landing in the wallet. docs/stripe.md, "Refunds while a generation runs".
CREATE TABLE take_back_shortfalls (
  id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  user_id text NOT NULL CONSTRAINT take_back_shortfalls_user_fk REFERENCES users (id),
  -- What took back: a Stripe payment's refund, a chargeback, or a RevenueCat token pack refund.
  source text NOT NULL CONSTRAINT take_back_shortfalls_source_ck CHECK (source IN ('stripe_refund', 'stripe_dispute', 'revenuecat_refund')),
  -- payments.id (stripe_refund), stripe_disputes.dispute_id (stripe_dispute), token_refunds.id (revenuecat_refund).
  source_id text NOT NULL,
  take_back_reference text NOT NULL,
  shortfall bigint NOT NULL CONSTRAINT take_back_shortfalls_shortfall_ck CHECK (shortfall > 0),
  recovered bigint NOT NULL DEFAULT 0 CONSTRAINT take_back_shortfalls_recovered_ck CHECK (recovered >= 0),
  last_ledger_entry_id bigint NOT NULL,
  -- A reinstated chargeback owes nothing any more: its shortfall is closed.
  closed_at timestamptz,
  created_at timestamptz NOT NULL DEFAULT now(),
  CONSTRAINT take_back_shortfalls_recovered_le_ck CHECK (recovered <= shortfall)
);
CREATE INDEX take_back_shortfalls_open_idx ON take_back_shortfalls (user_id, id) WHERE closed_at IS NULL;
