-- Auto top-up (docs/auto-topup.md): a user's card saved for off-session use, their settings, and
-- one durable row per attempt. The attempt is written by the spend that left `available` below
-- the threshold, in the spend's own transaction under the wallet lock; a worker loop charges it
-- after commit (never inside a transaction), with the attempt's reference as Stripe's
-- idempotency key. Its credit goes through the top-up path: a `topups` row whose reference is the
-- attempt's, settled by `payment_intent.succeeded` or a retrieve, like any top-up.
--
-- Live-safe: three new tables; two CHECKs widened NOT VALID (validated by 0043). Old code never
-- writes an attempt, and an `autotopup:` top-up reaches old code only through its settle, which
-- reads the row by reference.

-- The payment method `setup_intent.succeeded` saved for the user (the latest one wins).
CREATE TABLE saved_payment_methods (
  user_id text PRIMARY KEY CONSTRAINT saved_payment_methods_user_fk REFERENCES users (id),
  stripe_customer_id text NOT NULL CONSTRAINT saved_payment_methods_customer_ck CHECK (length(stripe_customer_id) BETWEEN 1 AND 255),
  payment_method_id text NOT NULL CONSTRAINT saved_payment_methods_method_ck CHECK (length(payment_method_id) BETWEEN 1 AND 255),
  setup_intent_id text NOT NULL,
  saved_at timestamptz NOT NULL DEFAULT now()
);

CREATE TABLE auto_topup_settings (
  user_id text PRIMARY KEY CONSTRAINT auto_topup_settings_user_fk REFERENCES users (id),
  pack_id text NOT NULL CONSTRAINT auto_topup_settings_pack_ck CHECK (length(pack_id) BETWEEN 1 AND 255),
  threshold bigint NOT NULL CONSTRAINT auto_topup_settings_threshold_ck CHECK (threshold >= 1),
  -- Top-ups per calendar month (UTC): attempts in flight or succeeded count, failed ones do not.
  monthly_limit integer NOT NULL CONSTRAINT auto_topup_settings_limit_ck CHECK (monthly_limit BETWEEN 1 AND 100),
  enabled boolean NOT NULL,
  -- Attempts failed in a row (declined, authentication required, refused): three disable it.
  failures_in_a_row integer NOT NULL DEFAULT 0 CONSTRAINT auto_topup_settings_failures_ck CHECK (failures_in_a_row >= 0),
  -- Why it is off when Tally turned it off: `failures` (three in a row) or `operator` (the console).
  disabled_reason text CONSTRAINT auto_topup_settings_disabled_ck CHECK (disabled_reason IN ('failures', 'operator')),
  created_at timestamptz NOT NULL DEFAULT now(),
  updated_at timestamptz NOT NULL DEFAULT now(),
  CONSTRAINT auto_topup_settings_reason_ck CHECK (disabled_reason IS NULL OR NOT enabled)
);

-- pending: to charge (again, with the same key); processing: the PaymentIntent exists and has not
-- finished (a retrieve or its webhook ends it); succeeded: credited; failed: ended unpaid;
-- canceled: ended before any call to Stripe (turned off, no longer needed, the pack gone).
CREATE TABLE auto_topup_attempts (
  id text PRIMARY KEY CONSTRAINT auto_topup_attempts_id_ck CHECK (id ~ '^at_[0-9a-f]{24}$'),
  user_id text NOT NULL CONSTRAINT auto_topup_attempts_user_fk REFERENCES users (id),
  pack_id text NOT NULL,
  -- What the spend saw: the threshold crossed and the available it left.
  threshold bigint NOT NULL,
  available_after bigint NOT NULL,
  stripe_customer_id text NOT NULL,
  payment_method_id text NOT NULL,
  status text NOT NULL DEFAULT 'pending'
    CONSTRAINT auto_topup_attempts_status_ck CHECK (status IN ('pending', 'processing', 'succeeded', 'failed', 'canceled')),
  -- Claims by the worker loop (each may have called Stripe: a later one resumes with the same key).
  tries integer NOT NULL DEFAULT 0 CONSTRAINT auto_topup_attempts_tries_ck CHECK (tries >= 0),
  first_tried_at timestamptz,
  next_attempt_at timestamptz NOT NULL DEFAULT now(),
  locked_until timestamptz,
  payment_intent_id text,
  failure_code text,
  failure_message text,
  requires_action boolean NOT NULL DEFAULT false,
  created_at timestamptz NOT NULL DEFAULT now(),
  updated_at timestamptz NOT NULL DEFAULT now(),
  finished_at timestamptz,
  CONSTRAINT auto_topup_attempts_finished_ck CHECK ((status IN ('pending', 'processing')) = (finished_at IS NULL))
);
-- One attempt in flight per user: the database's fence behind the spend's check.
CREATE UNIQUE INDEX auto_topup_attempts_in_flight_uq ON auto_topup_attempts (user_id) WHERE status IN ('pending', 'processing');
CREATE INDEX auto_topup_attempts_due_idx ON auto_topup_attempts (next_attempt_at) WHERE status IN ('pending', 'processing');
CREATE INDEX auto_topup_attempts_user_idx ON auto_topup_attempts (user_id, created_at);

-- An attempt's top-up is `autotopup:{attemptId}`.
ALTER TABLE topups DROP CONSTRAINT topups_reference_ck;
ALTER TABLE topups ADD CONSTRAINT topups_reference_ck
  CHECK (reference ~ '^tu_[A-Za-z0-9]{8,64}$' OR reference ~ '^autotopup:at_[0-9a-f]{24}$') NOT VALID;

ALTER TABLE app_webhook_messages DROP CONSTRAINT app_webhook_messages_type_ck;
ALTER TABLE app_webhook_messages ADD CONSTRAINT app_webhook_messages_type_ck CHECK (type IN (
  'wallet.credited', 'wallet.debited', 'wallet.balance_low', 'subscription.updated',
  'studio.request.completed', 'studio.request.failed',
  'wallet.credits_expiring', 'wallet.credits_expired', 'wallet.debt_changed',
  'wallet.auto_topup_failed', 'wallet.auto_topup_disabled')) NOT VALID;
