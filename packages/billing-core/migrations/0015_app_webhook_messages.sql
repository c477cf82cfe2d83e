-- Outbound webhooks to the app (docs/app-webhooks.md): one message per change the app cares
-- about, written in the transaction that makes the change, delivered after commit by the
-- `app-webhooks` worker role through the relay. The row follows the relay convention (id, status,
-- enqueued_at, next_attempt_at, updated_at).
--
-- Per-user order: every writer holds the user's wallet row lock (FOR UPDATE) from the moment the
-- row's id is drawn until its transaction commits (postLedgerEntry already holds it; the other
-- writers take it in the insert), so one user's ids are in commit order. The delivery claim then
-- takes a message only when no message of the same user with a smaller id is still pending or
-- processing (app_webhook_messages_user_pending_idx answers that).
CREATE TABLE app_webhook_messages (
  id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  -- The `webhook-id` header, the same on every attempt; random, so it never repeats across
  -- databases (the app dedupes on it).
  message_id uuid NOT NULL DEFAULT gen_random_uuid(),
  user_id text NOT NULL,
  type text NOT NULL CONSTRAINT app_webhook_messages_type_ck CHECK (type IN (
    'wallet.credited', 'wallet.debited', 'wallet.balance_low', 'subscription.updated',
    'studio.request.completed', 'studio.request.failed')),
  -- The ledger entry a wallet.credited / wallet.debited message announces: exactly one each. No
  -- foreign key: ledger entries are never deleted (their trigger refuses it), and the check would
  -- cost every money transaction one more index probe.
  ledger_entry_id bigint,
  data jsonb NOT NULL,
  status text NOT NULL DEFAULT 'pending'
    CONSTRAINT app_webhook_messages_status_ck CHECK (status IN ('pending', 'processing', 'delivered', 'failed')),
  attempts integer NOT NULL DEFAULT 0 CONSTRAINT app_webhook_messages_attempts_ck CHECK (attempts >= 0),
  last_status_code integer,
  -- What the last failed attempt got: the error, or the status and the body truncated.
  last_error text,
  enqueued_at timestamptz,
  next_attempt_at timestamptz,
  delivered_at timestamptz,
  -- The time of the change (the body's `timestamp`).
  created_at timestamptz NOT NULL DEFAULT now(),
  updated_at timestamptz NOT NULL DEFAULT now(),
  CONSTRAINT app_webhook_messages_message_id_uq UNIQUE (message_id),
  CONSTRAINT app_webhook_messages_ledger_entry_uq UNIQUE (ledger_entry_id),
  CONSTRAINT app_webhook_messages_ledger_entry_ck
    CHECK ((type IN ('wallet.credited', 'wallet.debited')) = (ledger_entry_id IS NOT NULL))
);

-- The delivery gate (oldest unfinished message of a user) and the next message to wake.
CREATE INDEX app_webhook_messages_user_pending_idx ON app_webhook_messages (user_id, id)
  WHERE status IN ('pending', 'processing');
-- The relay scans only unfinished rows.
CREATE INDEX app_webhook_messages_pending_idx ON app_webhook_messages (id)
  WHERE status IN ('pending', 'processing');
-- Admin listing by user (newest first) and retention of delivered messages.
CREATE INDEX app_webhook_messages_user_idx ON app_webhook_messages (user_id, id);
CREATE INDEX app_webhook_messages_delivered_idx ON app_webhook_messages (delivered_at) WHERE status = 'delivered';
-- The failed count the metrics read at each scrape (partial: inserts, all pending, never touch it).
CREATE INDEX app_webhook_messages_failed_idx ON app_webhook_messages (id) WHERE status = 'failed';
