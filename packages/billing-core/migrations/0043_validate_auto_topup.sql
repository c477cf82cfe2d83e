-- Validates 0042's widened CHECKs (SHARE UPDATE EXCLUSIVE: reads and writes go on).
ALTER TABLE topups VALIDATE CONSTRAINT topups_reference_ck;
ALTER TABLE app_webhook_messages VALIDATE CONSTRAINT app_webhook_messages_type_ck;
