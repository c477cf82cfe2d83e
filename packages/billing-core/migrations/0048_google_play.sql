-- Google Play, directly (docs/stores-google-play.md): the one-time product purchases Tally
-- credited, each with the durable consume that follows it after commit, and every voided
-- purchase Tally has seen (from a notification or the daily pass over the Voided Purchases API).
--
-- Live-safe: two new tables; old code reads neither.

-- One row per credited purchase, written in the credit's own transaction (the order id is the
-- fence: a second notification, a redelivery or a replay finds it and credits nothing). The
-- consume columns are the durable row the worker's google-play-consume loop works from: Google
-- refunds a purchase neither acknowledged nor consumed within three days, so a delivered pack is
-- consumed from the server after commit, retried until Google says it is consumed.
CREATE TABLE google_play_purchases (
  order_id text PRIMARY KEY CONSTRAINT google_play_purchases_order_ck CHECK (length(order_id) BETWEEN 1 AND 255),
  purchase_token text NOT NULL
    CONSTRAINT google_play_purchases_token_ck CHECK (length(purchase_token) BETWEEN 1 AND 4096)
    CONSTRAINT google_play_purchases_token_uq UNIQUE,
  -- The Play product id (`sku`) and the catalog pack it names.
  product_id text NOT NULL,
  pack_id text NOT NULL,
  user_id text NOT NULL CONSTRAINT google_play_purchases_user_fk REFERENCES users (id),
  quantity integer NOT NULL CONSTRAINT google_play_purchases_quantity_ck CHECK (quantity >= 1),
  tokens bigint NOT NULL CONSTRAINT google_play_purchases_tokens_ck CHECK (tokens >= 1),
  -- `google:order:{orderId}`: the credit's ledger entry (its purchased lot).
  ledger_reference text NOT NULL CONSTRAINT google_play_purchases_reference_uq UNIQUE,
  -- purchaseType 0 (a licence tester's purchase) is sandbox.
  environment text NOT NULL CONSTRAINT google_play_purchases_environment_ck CHECK (environment IN ('production', 'sandbox')),
  inbox_event_id bigint CONSTRAINT google_play_purchases_inbox_event_fk REFERENCES inbox_events (id),
  -- pending: to consume; consumed: Google said so; voided: voided before it was consumed (nothing
  -- left to protect from the automatic refund).
  consume_status text NOT NULL DEFAULT 'pending'
    CONSTRAINT google_play_purchases_consume_ck CHECK (consume_status IN ('pending', 'consumed', 'voided')),
  consume_tries integer NOT NULL DEFAULT 0 CONSTRAINT google_play_purchases_tries_ck CHECK (consume_tries >= 0),
  consume_next_attempt_at timestamptz NOT NULL DEFAULT now(),
  consume_locked_until timestamptz,
  consume_last_error text,
  consumed_at timestamptz,
  created_at timestamptz NOT NULL DEFAULT now(),
  updated_at timestamptz NOT NULL DEFAULT now(),
  CONSTRAINT google_play_purchases_consumed_ck CHECK ((consume_status = 'consumed') = (consumed_at IS NOT NULL))
);
CREATE INDEX google_play_purchases_consume_due_idx ON google_play_purchases (consume_next_attempt_at)
  WHERE consume_status = 'pending';
CREATE INDEX google_play_purchases_user_idx ON google_play_purchases (user_id, created_at);

-- Every voided purchase seen, once per order: a purchase voided before it was credited is never
-- credited afterwards (a late PURCHASED notification finds it here). The take-back itself is
-- fenced by token_refunds (provider google_play, the order id).
CREATE TABLE google_play_voided_purchases (
  order_id text PRIMARY KEY CONSTRAINT google_play_voided_order_ck CHECK (length(order_id) BETWEEN 1 AND 255),
  purchase_token text NOT NULL CONSTRAINT google_play_voided_token_ck CHECK (length(purchase_token) BETWEEN 1 AND 4096),
  -- notification: a voidedPurchaseNotification; voided_purchases_api: the daily pass.
  seen_by text NOT NULL CONSTRAINT google_play_voided_seen_by_ck CHECK (seen_by IN ('notification', 'voided_purchases_api')),
  -- Google's voidedTimeMillis when known.
  voided_at timestamptz,
  inbox_event_id bigint CONSTRAINT google_play_voided_inbox_event_fk REFERENCES inbox_events (id),
  created_at timestamptz NOT NULL DEFAULT now()
);
