-- The stores, directly (docs/stores.md): Apple's App Store Server Notifications V2 and Google
-- Play's real-time developer notifications join Stripe and RevenueCat as providers. This file
-- widens the provider and source CHECKs (NOT VALID: new rows are checked at once; 0045 validates)
-- and adds what both stores share: the ids a user's purchases carry (`store_accounts`: the UUID
-- the app passes to StoreKit as `appAccountToken`, the value it passes to Play Billing as
-- `obfuscatedAccountId`) and the user's consent to send Apple consumption data.
--
-- Live-safe: CHECKs widened (old code writes none of the new values), two new tables.
ALTER TABLE inbox_events DROP CONSTRAINT inbox_events_provider_ck;
ALTER TABLE inbox_events ADD CONSTRAINT inbox_events_provider_ck
  CHECK (provider IN ('stripe', 'revenuecat', 'apple', 'google_play')) NOT VALID;
ALTER TABLE subscriptions DROP CONSTRAINT subscriptions_source_ck;
ALTER TABLE subscriptions ADD CONSTRAINT subscriptions_source_ck
  CHECK (source IN ('revenuecat', 'stripe', 'apple', 'google_play')) NOT VALID;
ALTER TABLE subscription_history DROP CONSTRAINT subscription_history_source_ck;
ALTER TABLE subscription_history ADD CONSTRAINT subscription_history_source_ck
  CHECK (source IN ('revenuecat', 'stripe', 'apple', 'google_play')) NOT VALID;
ALTER TABLE payments DROP CONSTRAINT payments_provider_ck;
ALTER TABLE payments ADD CONSTRAINT payments_provider_ck
  CHECK (provider IN ('stripe', 'apple', 'google_play')) NOT VALID;
ALTER TABLE token_refunds DROP CONSTRAINT token_refunds_provider_ck;
ALTER TABLE token_refunds ADD CONSTRAINT token_refunds_provider_ck
  CHECK (provider IN ('stripe', 'revenuecat', 'apple', 'google_play')) NOT VALID;
ALTER TABLE take_back_shortfalls DROP CONSTRAINT take_back_shortfalls_source_ck;
ALTER TABLE take_back_shortfalls ADD CONSTRAINT take_back_shortfalls_source_ck
  CHECK (source IN ('stripe_refund', 'stripe_dispute', 'revenuecat_refund', 'priced_capture', 'apple_refund', 'google_voided')) NOT VALID;

-- One row per user, made on the first `GET /v1/users/{userId}/store-accounts`: the ids are
-- random (never the user id itself, which the stores must not see), unique, and never change.
CREATE TABLE store_accounts (
  user_id text PRIMARY KEY CONSTRAINT store_accounts_user_fk REFERENCES users (id),
  apple_app_account_token uuid NOT NULL DEFAULT gen_random_uuid() CONSTRAINT store_accounts_apple_uq UNIQUE,
  google_obfuscated_account_id text NOT NULL DEFAULT replace(gen_random_uuid()::text, '-', '')
    CONSTRAINT store_accounts_google_uq UNIQUE
    CONSTRAINT store_accounts_google_ck CHECK (length(google_obfuscated_account_id) BETWEEN 1 AND 64),
  created_at timestamptz NOT NULL DEFAULT now()
);

-- `POST /v1/users/{userId}/store-consent`: whether the user agreed, in the app, that Tally sends
-- Apple consumption data for their refund requests. The latest answer stands.
CREATE TABLE store_consents (
  user_id text PRIMARY KEY CONSTRAINT store_consents_user_fk REFERENCES users (id),
  consented boolean NOT NULL,
  updated_at timestamptz NOT NULL DEFAULT now()
);
