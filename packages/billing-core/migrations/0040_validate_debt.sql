-- Validates 0039's CHECKs (VALIDATE CONSTRAINT takes SHARE UPDATE EXCLUSIVE: reads and writes go on).
ALTER TABLE wallets VALIDATE CONSTRAINT wallets_debt_ck;
ALTER TABLE take_back_shortfalls VALIDATE CONSTRAINT take_back_shortfalls_forgiven_ck;
ALTER TABLE app_webhook_messages VALIDATE CONSTRAINT app_webhook_messages_type_ck;
