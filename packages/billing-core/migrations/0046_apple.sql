-- Apple App Store Server Notifications V2, directly (docs/stores-apple.md). A token pack bought
-- through StoreKit is a row of `payments` (provider 'apple', provider_payment_id the
-- transactionId): its unique key credits one transaction once, and support sees it beside
-- Stripe's. This file adds what only Apple has: its refunds (with their reversal) and the durable
-- rows of the consumption information Tally sends Apple after a CONSUMPTION_REQUEST.
--
-- Live-safe: two new tables; old code writes neither.

-- One row per refund of an Apple pack: a transaction refunded (REFUND, its revocationDate) takes
-- back what the payment still has granted, once; REFUND_REVERSED gives back what it took and
-- forgives what it could not take. Keyed by the transaction and its revocation date, so a later
-- refund of the same transaction (after a reversal) is a refund of its own.
CREATE TABLE apple_refunds (
  id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  transaction_id text NOT NULL,
  revoked_at timestamptz NOT NULL,
  payment_id bigint NOT NULL CONSTRAINT apple_refunds_payment_fk REFERENCES payments (id),
  user_id text NOT NULL CONSTRAINT apple_refunds_user_fk REFERENCES users (id),
  -- Apple's revocationReason (0 other, 1 an issue in the app): for support.
  revocation_reason integer,
  tokens_owed bigint NOT NULL CONSTRAINT apple_refunds_owed_ck CHECK (tokens_owed >= 0),
  -- What the take-back took, and later what settled its shortfall (settleSource moves it here).
  tokens_taken bigint NOT NULL DEFAULT 0 CONSTRAINT apple_refunds_taken_ck CHECK (tokens_taken >= 0),
  shortfall bigint NOT NULL GENERATED ALWAYS AS (tokens_owed - tokens_taken) STORED,
  tokens_given_back bigint NOT NULL DEFAULT 0 CONSTRAINT apple_refunds_given_back_ck CHECK (tokens_given_back >= 0),
  refund_inbox_event_id bigint,
  reversed_at timestamptz,
  reversed_inbox_event_id bigint,
  created_at timestamptz NOT NULL DEFAULT now(),
  CONSTRAINT apple_refunds_transaction_uq UNIQUE (transaction_id, revoked_at),
  CONSTRAINT apple_refunds_taken_ck2 CHECK (tokens_taken <= tokens_owed)
);
CREATE INDEX apple_refunds_user_idx ON apple_refunds (user_id, id);
CREATE INDEX apple_refunds_payment_idx ON apple_refunds (payment_id);

-- One row per CONSUMPTION_REQUEST notification (its notificationUUID), answered after commit by
-- the worker's apple-consumption loop with Send Consumption Information: `sent` once Apple
-- answered 2xx (never sent again), `no_consent` when the user never agreed (nothing sent),
-- `rejected` when Apple refused the body (4xx), `expired` past Apple's 12-hour window.
CREATE TABLE apple_consumption_requests (
  id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  notification_uuid text NOT NULL CONSTRAINT apple_consumption_requests_notification_uq UNIQUE,
  transaction_id text NOT NULL,
  environment text NOT NULL CONSTRAINT apple_consumption_requests_environment_ck CHECK (environment IN ('production', 'sandbox')),
  payment_id bigint NOT NULL CONSTRAINT apple_consumption_requests_payment_fk REFERENCES payments (id),
  user_id text NOT NULL CONSTRAINT apple_consumption_requests_user_fk REFERENCES users (id),
  -- Apple's consumptionRequestReason (UNINTENDED_PURCHASE, …): for support.
  reason text,
  -- Apple ignores an answer later than this (12 hours after the notification was signed).
  answer_by timestamptz NOT NULL,
  status text NOT NULL DEFAULT 'pending' CONSTRAINT apple_consumption_requests_status_ck
    CHECK (status IN ('pending', 'sent', 'no_consent', 'rejected', 'expired')),
  -- What was sent (milliunits of the pack's lot spent, 0 to 100000).
  consumption_percentage integer CONSTRAINT apple_consumption_requests_percentage_ck
    CHECK (consumption_percentage BETWEEN 0 AND 100000),
  tries integer NOT NULL DEFAULT 0 CONSTRAINT apple_consumption_requests_tries_ck CHECK (tries >= 0),
  next_attempt_at timestamptz NOT NULL DEFAULT now(),
  locked_until timestamptz,
  last_error text,
  inbox_event_id bigint,
  created_at timestamptz NOT NULL DEFAULT now(),
  updated_at timestamptz NOT NULL DEFAULT now(),
  finished_at timestamptz,
  CONSTRAINT apple_consumption_requests_finished_ck CHECK ((status = 'pending') = (finished_at IS NULL))
);
CREATE INDEX apple_consumption_requests_due_idx ON apple_consumption_requests (next_attempt_at) WHERE status = 'pending';
CREATE INDEX apple_consumption_requests_user_idx ON apple_consumption_requests (user_id, id);
