-- AI Studio: one durable row per generation request, written in the same transaction as its
-- debit. The row follows the relay convention (id, status, enqueued_at, next_attempt_at,
-- updated_at): `id` is the internal bigint the queue and relay carry; `public_id` is the id the
-- API shows and the ledger references use (`studio:{public_id}:debit`, `studio:{public_id}:refund`).

CREATE TABLE studio_requests (
  id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  public_id uuid NOT NULL DEFAULT gen_random_uuid(),
  user_id text NOT NULL CONSTRAINT studio_requests_user_fk REFERENCES users (id),
  kind text NOT NULL CONSTRAINT studio_requests_kind_ck CHECK (kind IN ('image_edit', 'music')),
  duration_seconds integer CONSTRAINT studio_requests_duration_ck CHECK (duration_seconds > 0),
  "full" boolean NOT NULL DEFAULT false,
  input jsonb NOT NULL,
  -- What the catalog said it costs, and what was debited (0 on the free tier).
  price_tokens integer NOT NULL CONSTRAINT studio_requests_price_ck CHECK (price_tokens > 0),
  tokens_charged integer NOT NULL CONSTRAINT studio_requests_tokens_charged_ck CHECK (tokens_charged >= 0),
  free_tier boolean NOT NULL,
  -- The UTC day (from the injected clock) whose free allowance this request used or skipped.
  usage_day date NOT NULL,
  status text NOT NULL DEFAULT 'received'
    CONSTRAINT studio_requests_status_ck CHECK (status IN ('received', 'processing', 'completed', 'failed')),
  result jsonb,
  error_code text CONSTRAINT studio_requests_error_code_ck CHECK (error_code ~ '^[a-z][a-z0-9_]{0,63}$'),
  error text,
  attempts integer NOT NULL DEFAULT 0 CONSTRAINT studio_requests_attempts_ck CHECK (attempts >= 0),
  enqueued_at timestamptz,
  next_attempt_at timestamptz,
  completed_at timestamptz,
  failed_at timestamptz,
  refunded_at timestamptz,
  created_at timestamptz NOT NULL DEFAULT now(),
  updated_at timestamptz NOT NULL DEFAULT now(),
  CONSTRAINT studio_requests_public_id_uq UNIQUE (public_id),
  CONSTRAINT studio_requests_free_tier_ck CHECK (free_tier = (tokens_charged = 0)),
  CONSTRAINT studio_requests_charge_ck CHECK (tokens_charged = 0 OR tokens_charged = price_tokens),
  CONSTRAINT studio_requests_result_ck CHECK (status <> 'completed' OR result IS NOT NULL),
  CONSTRAINT studio_requests_refund_ck CHECK (refunded_at IS NULL OR (status = 'failed' AND tokens_charged > 0))
);

-- The per-user list (newest first) and the allowance count (free, not failed, one UTC day).
CREATE INDEX studio_requests_user_idx ON studio_requests (user_id, id);
CREATE INDEX studio_requests_allowance_idx ON studio_requests (user_id, usage_day, kind)
  WHERE free_tier AND status <> 'failed';
-- The relay and the sweeper scan only unfinished rows.
CREATE INDEX studio_requests_pending_idx ON studio_requests (id) WHERE status IN ('received', 'processing');
