-- Idempotency keys of the product API (docs/idempotency.md): the first answer to a POST under
-- /v1 sent with an `Idempotency-Key`, kept per canonical user and key so a retry gets it again
-- instead of running twice. The unique (user_id, idempotency_key) is the fence: of any number
-- of concurrent requests with one key, one inserts the row and runs; the others find it.
--
-- A row is claimed (locked_at, lock_token: a lease) by the request that runs it, and moves
-- through recovery points: `started` → (top-up create only) `recharge_created`, with the top-up
-- it made → `finished`, with the answer. Every write of a request is fenced on its lock_token,
-- so a request whose lease was taken over after it expired can no longer finish. A request that
-- dies keeps its recovery point; its retry takes the lease over once it expired and resumes.
-- Rows older than IDEMPOTENCY_KEY_TTL_HOURS are deleted by the worker's retention role.
CREATE TABLE idempotency_keys (
  id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  -- The canonical user (resolveUserId), not the id the path spelled; no foreign key: the key is
  -- claimed before the request's transaction creates the user.
  user_id text NOT NULL,
  -- 1 to 255 visible ASCII characters (VCHAR, 0x21-0x7E).
  idempotency_key text NOT NULL CONSTRAINT idempotency_keys_key_ck CHECK (idempotency_key ~ '^[!-~]{1,255}$'),
  request_method text NOT NULL,
  request_path text NOT NULL,
  -- sha256 (hex) of the request body as canonical JSON.
  request_hash text NOT NULL CONSTRAINT idempotency_keys_request_hash_ck CHECK (request_hash ~ '^[0-9a-f]{64}$'),
  recovery_point text NOT NULL DEFAULT 'started'
    CONSTRAINT idempotency_keys_recovery_point_ck CHECK (recovery_point IN ('started', 'recharge_created', 'finished')),
  -- The top-up row a top-up create committed (recovery point recharge_created and after).
  topup_reference text CONSTRAINT idempotency_keys_topup_fk REFERENCES topups (reference),
  locked_at timestamptz,
  lock_token uuid,
  response_status integer CONSTRAINT idempotency_keys_response_status_ck CHECK (response_status BETWEEN 100 AND 499),
  -- The answer's JSON text exactly as it was sent (text, not jsonb: a replay is byte for byte).
  response_body text,
  created_at timestamptz NOT NULL DEFAULT now(),
  updated_at timestamptz NOT NULL DEFAULT now(),
  finished_at timestamptz,
  CONSTRAINT idempotency_keys_user_key_uq UNIQUE (user_id, idempotency_key),
  CONSTRAINT idempotency_keys_finished_ck CHECK (
    (recovery_point = 'finished') = (response_status IS NOT NULL AND response_body IS NOT NULL AND finished_at IS NOT NULL)
  ),
  CONSTRAINT idempotency_keys_lock_ck CHECK (
    (locked_at IS NULL) = (lock_token IS NULL) AND (recovery_point <> 'finished' OR locked_at IS NULL)
  ),
  CONSTRAINT idempotency_keys_recharge_ck CHECK (recovery_point <> 'recharge_created' OR topup_reference IS NOT NULL)
);

-- Retention deletes by age, oldest first.
CREATE INDEX idempotency_keys_created_idx ON idempotency_keys (created_at);
