-- One vocabulary for the payment environment: inbox_events.environment holds what the policy
-- (PAYMENT_ENVIRONMENTS) speaks, 'production' or 'sandbox', for every provider. Until now it held
-- Stripe's 'live'/'test' and RevenueCat's 'PRODUCTION'/'SANDBOX' (or whatever RevenueCat sent),
-- while the policy read `livemode`. The environment is what `livemode` says: Stripe's own flag,
-- and for RevenueCat `environment = PRODUCTION` (anything else named is sandbox, as the policy
-- has always treated it); NULL when the event named none.
UPDATE inbox_events
   SET environment = CASE WHEN livemode THEN 'production' WHEN NOT livemode THEN 'sandbox' END
 WHERE environment IS DISTINCT FROM CASE WHEN livemode THEN 'production' WHEN NOT livemode THEN 'sandbox' END;

-- Migrations run before a rollout, so ingest replicas of the previous release keep inserting the
-- old values for a while: this trigger translates them (from livemode, which they write as
-- before) so that their inserts pass the checks below instead of failing. Nothing else writes the
-- old values; a later migration may drop it once no release before 0012 runs.
CREATE FUNCTION inbox_events_environment_from_livemode() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
  IF NEW.environment IS NOT NULL AND NEW.environment NOT IN ('production', 'sandbox') THEN
    NEW.environment := CASE WHEN NEW.livemode THEN 'production' WHEN NOT NEW.livemode THEN 'sandbox' END;
  END IF;
  RETURN NEW;
END
$$;
CREATE TRIGGER inbox_events_environment_legacy_trg
  BEFORE INSERT ON inbox_events
  FOR EACH ROW EXECUTE FUNCTION inbox_events_environment_from_livemode();

ALTER TABLE inbox_events ADD CONSTRAINT inbox_events_environment_ck
  CHECK (environment IN ('production', 'sandbox'));
-- environment and livemode say the same thing (both NULL when the event named no environment).
ALTER TABLE inbox_events ADD CONSTRAINT inbox_events_environment_livemode_ck
  CHECK ((environment = 'production') IS NOT DISTINCT FROM livemode);
