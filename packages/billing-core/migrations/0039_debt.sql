-- Debt (issue 58, docs/debt.md): what a take-back or a priced capture could not take is the
-- wallet's debt. The rows stay where they are (take_back_shortfalls: each says what made it and
-- what settled it); the wallet carries their open total, kept by a trigger on those rows so no
-- writer can forget it, and the database refuses a negative one.
--
-- Live database: ADD COLUMN with a constant default rewrites nothing; the CHECK is added NOT VALID
-- (0040 validates it). CREATE TRIGGER takes SHARE ROW EXCLUSIVE on take_back_shortfalls, so no
-- shortfall is written between the trigger's start and the backfill below: the backfill turns
-- today's open shortfalls into debt exactly once. The ACCESS EXCLUSIVE instant on wallets is bounded.
SET LOCAL lock_timeout = '5s';

ALTER TABLE wallets ADD COLUMN debt bigint NOT NULL DEFAULT 0;
ALTER TABLE wallets ADD CONSTRAINT wallets_debt_ck CHECK (debt >= 0) NOT VALID;

-- What support forgave of a row (POST /admin/users/{userId}/debt/forgive, audited). A row's open
-- debt is shortfall - recovered - forgiven; a row with nothing open is closed.
ALTER TABLE take_back_shortfalls ADD COLUMN forgiven bigint NOT NULL DEFAULT 0;
ALTER TABLE take_back_shortfalls
  ADD CONSTRAINT take_back_shortfalls_forgiven_ck CHECK (forgiven >= 0 AND recovered + forgiven <= shortfall) NOT VALID;

CREATE FUNCTION take_back_shortfalls_debt() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
  before_open bigint := 0;
  after_open bigint := 0;
BEGIN
  IF TG_OP = 'UPDATE' AND OLD.closed_at IS NULL THEN
    before_open := OLD.shortfall - OLD.recovered - OLD.forgiven;
  END IF;
  IF NEW.closed_at IS NULL THEN
    after_open := NEW.shortfall - NEW.recovered - NEW.forgiven;
  END IF;
  IF after_open <> before_open THEN
    UPDATE wallets SET debt = debt + (after_open - before_open) WHERE user_id = NEW.user_id;
  END IF;
  RETURN NULL;
END;
$$;

CREATE TRIGGER take_back_shortfalls_debt
  AFTER INSERT OR UPDATE OF shortfall, recovered, forgiven, closed_at ON take_back_shortfalls
  FOR EACH ROW EXECUTE FUNCTION take_back_shortfalls_debt();

-- A shortfall row moves to another user never; deleting one would forget debt.
CREATE FUNCTION take_back_shortfalls_keep() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  RAISE EXCEPTION 'take_back_shortfalls rows are debt: they are closed, never deleted or moved';
END;
$$;
CREATE TRIGGER take_back_shortfalls_keep
  BEFORE DELETE OR UPDATE OF user_id ON take_back_shortfalls
  FOR EACH ROW EXECUTE FUNCTION take_back_shortfalls_keep();

-- wallet.debt_changed (docs/app-webhooks.md): written by the ledger with every change of debt.
ALTER TABLE app_webhook_messages DROP CONSTRAINT app_webhook_messages_type_ck;
ALTER TABLE app_webhook_messages ADD CONSTRAINT app_webhook_messages_type_ck CHECK (type IN (
  'wallet.credited', 'wallet.debited', 'wallet.balance_low', 'subscription.updated',
  'studio.request.completed', 'studio.request.failed',
  'wallet.credits_expiring', 'wallet.credits_expired', 'wallet.debt_changed')) NOT VALID;

UPDATE wallets w
   SET debt = s.open
  FROM (SELECT user_id, sum(shortfall - recovered - forgiven) AS open
          FROM take_back_shortfalls WHERE closed_at IS NULL GROUP BY user_id) s
 WHERE w.user_id = s.user_id AND s.open > 0;
