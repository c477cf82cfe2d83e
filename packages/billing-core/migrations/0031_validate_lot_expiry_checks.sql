-- Validates the three CHECKs 0028 added NOT VALID, so Postgres vouches for every row, old ones
-- included (existing rows satisfy them by construction: 0028's lists are supersets of the old).
-- Live-safe: VALIDATE CONSTRAINT takes SHARE UPDATE EXCLUSIVE, which lets reads and writes go on
-- while it scans (app_webhook_messages is kept short by retention; credit_lots by user count).
ALTER TABLE credit_lots VALIDATE CONSTRAINT credit_lots_rollover_max_ck;
ALTER TABLE app_webhook_messages VALIDATE CONSTRAINT app_webhook_messages_type_ck;
ALTER TABLE app_webhook_messages VALIDATE CONSTRAINT app_webhook_messages_ledger_entry_ck;
