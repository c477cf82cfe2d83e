-- Credit lot expiry (docs/lots.md "Expiry and rollover"): what the sweeper needs on the lots, the
-- rollover allowance an installment hands to its lot, and the two new app webhook messages.
-- Live-safe: defaulted or nullable columns (no rewrite), one partial index on a table of lots,
-- and CHECKs added NOT VALID (they hold for every new row at once; existing rows satisfy them
-- by construction: the old lists are subsets of the new).

-- The price's rolloverMax when the lot was created (0: no rollover; a rollover lot has 0).
ALTER TABLE credit_lots ADD COLUMN rollover_max integer NOT NULL DEFAULT 0;
ALTER TABLE credit_lots ADD CONSTRAINT credit_lots_rollover_max_ck CHECK (rollover_max >= 0) NOT VALID;
-- When wallet.credits_expiring was written for the lot (NULL: not yet): it is sent once.
ALTER TABLE credit_lots ADD COLUMN expiry_notice_at timestamptz;
-- The sweeper's scan: lots with tokens left that expire (both the notice and the expiry).
CREATE INDEX credit_lots_expiry_idx ON credit_lots (expires_at) WHERE remaining > 0 AND expires_at IS NOT NULL;

-- An annual plan's installment lot rolls over like the invoice's.
ALTER TABLE stripe_installments ADD COLUMN lot_rollover_max integer NOT NULL DEFAULT 0;

ALTER TABLE app_webhook_messages DROP CONSTRAINT app_webhook_messages_type_ck;
ALTER TABLE app_webhook_messages ADD CONSTRAINT app_webhook_messages_type_ck CHECK (type IN (
  'wallet.credited', 'wallet.debited', 'wallet.balance_low', 'subscription.updated',
  'studio.request.completed', 'studio.request.failed',
  'wallet.credits_expiring', 'wallet.credits_expired')) NOT VALID;
-- wallet.credits_expired announces its expiry entry, as wallet.debited does a debit.
ALTER TABLE app_webhook_messages DROP CONSTRAINT app_webhook_messages_ledger_entry_ck;
ALTER TABLE app_webhook_messages ADD CONSTRAINT app_webhook_messages_ledger_entry_ck
  CHECK ((type IN ('wallet.credited', 'wallet.debited', 'wallet.credits_expired')) = (ledger_entry_id IS NOT NULL)) NOT VALID;
