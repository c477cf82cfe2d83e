-- When the Stripe API read a subscription row's state was started (the worker's clock, just
-- before the request). Subscription events re-read the subscription outside any transaction, so
-- two events of one subscription can be prepared concurrently around a change at Stripe; the one
-- whose read started later wins, and an older read applied afterwards changes nothing. NULL for
-- rows saved before this column existed (any read may then replace them).
ALTER TABLE stripe_subscriptions ADD COLUMN provider_read_at timestamptz;
