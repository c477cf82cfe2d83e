-- Leases: one holder at a time for work that spans many transactions and third-party calls (a
-- scheduled Stripe reconciliation pass), across any number of replicas. A session advisory lock
-- did this before, but behind PgBouncer in transaction mode a session is not one server
-- connection: the lock and its unlock would land on different backends. A lease is a row claimed
-- with a conditional upsert (only when absent or expired), renewed while its holder works, and
-- deleted when it is done; a holder that dies stops renewing and the lease expires.
CREATE TABLE leases (
  name text CONSTRAINT leases_pk PRIMARY KEY CONSTRAINT leases_name_ck CHECK (length(name) BETWEEN 1 AND 100),
  holder text NOT NULL CONSTRAINT leases_holder_ck CHECK (length(holder) BETWEEN 1 AND 200),
  acquired_at timestamptz NOT NULL DEFAULT now(),
  expires_at timestamptz NOT NULL,
  CONSTRAINT leases_expiry_ck CHECK (expires_at >= acquired_at)
);
