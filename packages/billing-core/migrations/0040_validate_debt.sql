-- Validates 0039's CHECK (VALIDATE CONSTRAINT takes SHARE UPDATE EXCLUSIVE: reads and writes go on).
ALTER TABLE wallets VALIDATE CONSTRAINT wallets_debt_ck;
