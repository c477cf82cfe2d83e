-- One outcome code for a refund that took back part of what was credited: `partially_refunded`
-- (Stripe's since 0010, and the payment status). RevenueCat token pack refunds wrote
-- `refunded_partially` for the same outcome; the stored code is filterable
-- (`GET /admin/events?outcome=`, the console, `tally events`), so every row gets the one code.
UPDATE inbox_events SET outcome_code = 'partially_refunded' WHERE outcome_code = 'refunded_partially';

-- Migrations run before a rollout, so workers of the previous release may still finish a refund
-- with the old code for a while: this trigger translates it (the WHEN clause keeps every other
-- write of the row free of it). A later migration may drop it once no release before 0026 runs.
CREATE FUNCTION inbox_events_partially_refunded_code() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
  NEW.outcome_code := 'partially_refunded';
  RETURN NEW;
END
$$;
CREATE TRIGGER inbox_events_partially_refunded_code_trg
  BEFORE INSERT OR UPDATE OF outcome_code ON inbox_events
  FOR EACH ROW WHEN (NEW.outcome_code = 'refunded_partially')
  EXECUTE FUNCTION inbox_events_partially_refunded_code();
