-- Operators' actions, append-only: every state-changing admin action (requeue, replay,
-- redeliver, reconcile, a dashboard retry) from the admin API, the console, the queue dashboard
-- or the CLI writes one row with what was done, to which row, by which key and what it answered.
CREATE TABLE admin_audit (
  id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  -- A name from billing-core's adminActions ('inbox.requeue', …), or "METHOD /route/:pattern"
  -- for an HTTP action no name was given to.
  action text NOT NULL CONSTRAINT admin_audit_action_ck CHECK (length(action) BETWEEN 1 AND 300),
  surface text NOT NULL CONSTRAINT admin_audit_surface_ck CHECK (surface IN ('api', 'console', 'dashboard', 'cli')),
  -- The row acted on ('inbox_event', '42'), or NULL for an action by filter (see request).
  target_kind text,
  target_id text,
  -- HTTP method and path (NULL for the CLI); the route parameters and body, size-capped.
  method text,
  path text,
  request jsonb,
  -- The first 12 hex digits of SHA-256 of the admin key used (NULL for the CLI, which has none).
  key_fingerprint text CONSTRAINT admin_audit_key_fingerprint_ck CHECK (key_fingerprint ~ '^[0-9a-f]{12}$'),
  -- Who said they were: the Basic auth user name, or the CLI's OS user. Not verified.
  actor text,
  -- The answer: HTTP status (NULL for the CLI), 'ok' or the error code, and the body, size-capped.
  status_code integer,
  outcome text NOT NULL,
  answer jsonb,
  created_at timestamptz NOT NULL DEFAULT now()
);

CREATE INDEX admin_audit_target_idx ON admin_audit (target_kind, target_id, id) WHERE target_id IS NOT NULL;

-- Audit rows are facts, like ledger rows: never edited or removed.
CREATE FUNCTION admin_audit_reject_change() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
  RAISE EXCEPTION 'admin_audit is append-only (% rejected)', TG_OP
    USING ERRCODE = 'restrict_violation';
END;
$$;

CREATE TRIGGER admin_audit_append_only_trg
  BEFORE UPDATE OR DELETE ON admin_audit
  FOR EACH ROW EXECUTE FUNCTION admin_audit_reject_change();

CREATE TRIGGER admin_audit_no_truncate_trg
  BEFORE TRUNCATE ON admin_audit
  FOR EACH STATEMENT EXECUTE FUNCTION admin_audit_reject_change();
