-- Stripe: customers mapped to users, payments, subscriptions, top-ups, annual-plan installments
-- and the confirmation email outbox. Stripe's subscription table is `stripe_subscriptions` so it
-- coexists with the store-neutral/RevenueCat `subscriptions` table of migration 0003.

-- A Stripe customer id seen together with a user is remembered, so later events that carry only
-- the customer (invoices) find the user. The first mapping wins.
CREATE TABLE stripe_customers (
  customer_id text PRIMARY KEY CONSTRAINT stripe_customers_customer_id_ck CHECK (length(customer_id) BETWEEN 1 AND 255),
  user_id text NOT NULL CONSTRAINT stripe_customers_user_fk REFERENCES users (id),
  created_at timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX stripe_customers_user_idx ON stripe_customers (user_id);

-- One row per Stripe payment: a PaymentIntent (token packs, top-ups) or a paid invoice
-- (subscriptions). The unique provider payment id is the business-level fence.
CREATE TABLE payments (
  id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  provider text NOT NULL DEFAULT 'stripe' CONSTRAINT payments_provider_ck CHECK (provider IN ('stripe')),
  provider_payment_id text NOT NULL,
  user_id text NOT NULL CONSTRAINT payments_user_fk REFERENCES users (id),
  kind text NOT NULL CONSTRAINT payments_kind_ck CHECK (kind IN ('token_pack', 'topup', 'subscription_invoice')),
  -- The pack id (token_pack, topup) or plan id (subscription_invoice).
  product_id text NOT NULL,
  amount_minor bigint NOT NULL CONSTRAINT payments_amount_minor_ck CHECK (amount_minor >= 0),
  currency text NOT NULL,
  status text NOT NULL DEFAULT 'succeeded'
    CONSTRAINT payments_status_ck CHECK (status IN ('succeeded', 'refunded')),
  -- The ledger reference that granted the tokens, and how many.
  ledger_reference text NOT NULL,
  tokens_granted bigint NOT NULL CONSTRAINT payments_tokens_granted_ck CHECK (tokens_granted >= 0),
  -- Refunds: tokens taken back, and those that could not be (already spent) — for support.
  tokens_refunded bigint NOT NULL DEFAULT 0 CONSTRAINT payments_tokens_refunded_ck CHECK (tokens_refunded >= 0),
  refund_shortfall bigint NOT NULL DEFAULT 0 CONSTRAINT payments_refund_shortfall_ck CHECK (refund_shortfall >= 0),
  refunded_at timestamptz,
  customer_email text,
  inbox_event_id bigint CONSTRAINT payments_inbox_event_fk REFERENCES inbox_events (id),
  created_at timestamptz NOT NULL DEFAULT now(),
  updated_at timestamptz NOT NULL DEFAULT now(),
  CONSTRAINT payments_provider_payment_uq UNIQUE (provider, provider_payment_id)
);
CREATE INDEX payments_user_idx ON payments (user_id, id);

-- Stripe subscriptions as the Stripe API last reported them (re-read on every event).
CREATE TABLE stripe_subscriptions (
  subscription_id text PRIMARY KEY,
  user_id text NOT NULL CONSTRAINT stripe_subscriptions_user_fk REFERENCES users (id),
  customer_id text,
  plan_id text,
  price_id text,
  billing_interval text CONSTRAINT stripe_subscriptions_interval_ck CHECK (billing_interval IN ('month', 'year')),
  status text NOT NULL,
  current_period_end timestamptz,
  cancel_at_period_end boolean NOT NULL DEFAULT false,
  canceled_at timestamptz,
  ended_at timestamptz,
  created_at timestamptz NOT NULL DEFAULT now(),
  updated_at timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX stripe_subscriptions_user_idx ON stripe_subscriptions (user_id);

-- Top-ups started through the API: pending until the PaymentIntent succeeds (confirm endpoint or
-- webhook, whichever first), then paid. The pending → paid transition is the only place a
-- top-up credits.
CREATE TABLE topups (
  reference text PRIMARY KEY CONSTRAINT topups_reference_ck CHECK (reference ~ '^tu_[A-Za-z0-9]{8,64}$'),
  user_id text NOT NULL CONSTRAINT topups_user_fk REFERENCES users (id),
  pack_id text NOT NULL,
  tokens bigint NOT NULL CONSTRAINT topups_tokens_ck CHECK (tokens > 0),
  amount_minor bigint NOT NULL CONSTRAINT topups_amount_minor_ck CHECK (amount_minor > 0),
  currency text NOT NULL,
  payment_intent_id text CONSTRAINT topups_payment_intent_uq UNIQUE,
  status text NOT NULL DEFAULT 'pending' CONSTRAINT topups_status_ck CHECK (status IN ('pending', 'paid')),
  paid_at timestamptz,
  created_at timestamptz NOT NULL DEFAULT now(),
  updated_at timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX topups_user_idx ON topups (user_id, created_at);

-- Annual plans: eleven monthly installments after the first twelfth. Due dates come from the
-- database clock. scheduled → processing (claimed, attempts + 1) → granted; void when the
-- subscription ends before the installment is due.
CREATE TABLE stripe_installments (
  id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  subscription_id text NOT NULL CONSTRAINT stripe_installments_subscription_fk REFERENCES stripe_subscriptions (subscription_id),
  invoice_id text NOT NULL,
  user_id text NOT NULL CONSTRAINT stripe_installments_user_fk REFERENCES users (id),
  sequence integer NOT NULL CONSTRAINT stripe_installments_sequence_ck CHECK (sequence BETWEEN 1 AND 11),
  tokens bigint NOT NULL CONSTRAINT stripe_installments_tokens_ck CHECK (tokens > 0),
  due_at timestamptz NOT NULL,
  status text NOT NULL DEFAULT 'scheduled'
    CONSTRAINT stripe_installments_status_ck CHECK (status IN ('scheduled', 'processing', 'granted', 'void', 'failed')),
  attempts integer NOT NULL DEFAULT 0 CONSTRAINT stripe_installments_attempts_ck CHECK (attempts >= 0),
  last_error text,
  granted_at timestamptz,
  created_at timestamptz NOT NULL DEFAULT now(),
  updated_at timestamptz NOT NULL DEFAULT now(),
  CONSTRAINT stripe_installments_invoice_sequence_uq UNIQUE (invoice_id, sequence)
);
CREATE INDEX stripe_installments_due_idx ON stripe_installments (due_at, id) WHERE status IN ('scheduled', 'processing');
CREATE INDEX stripe_installments_subscription_idx ON stripe_installments (subscription_id);

-- Confirmation emails: written in the transaction that records the payment (at most one per
-- payment), sent after commit by the worker through the relay. Never touches money.
CREATE TABLE email_outbox (
  id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  payment_id bigint NOT NULL CONSTRAINT email_outbox_payment_fk REFERENCES payments (id),
  user_id text NOT NULL,
  to_address text,
  subject text NOT NULL,
  body text NOT NULL,
  status text NOT NULL DEFAULT 'pending'
    CONSTRAINT email_outbox_status_ck CHECK (status IN ('pending', 'processing', 'sent', 'skipped', 'failed')),
  attempts integer NOT NULL DEFAULT 0 CONSTRAINT email_outbox_attempts_ck CHECK (attempts >= 0),
  last_error text,
  enqueued_at timestamptz,
  next_attempt_at timestamptz,
  sent_at timestamptz,
  created_at timestamptz NOT NULL DEFAULT now(),
  updated_at timestamptz NOT NULL DEFAULT now(),
  CONSTRAINT email_outbox_payment_uq UNIQUE (payment_id)
);
CREATE INDEX email_outbox_pending_idx ON email_outbox (id) WHERE status IN ('pending', 'processing');
