-- Validates 0044's widened CHECKs (SHARE UPDATE EXCLUSIVE: reads and writes go on).
ALTER TABLE inbox_events VALIDATE CONSTRAINT inbox_events_provider_ck;
ALTER TABLE subscriptions VALIDATE CONSTRAINT subscriptions_source_ck;
ALTER TABLE subscription_history VALIDATE CONSTRAINT subscription_history_source_ck;
ALTER TABLE payments VALIDATE CONSTRAINT payments_provider_ck;
ALTER TABLE token_refunds VALIDATE CONSTRAINT token_refunds_provider_ck;
ALTER TABLE take_back_shortfalls VALIDATE CONSTRAINT take_back_shortfalls_source_ck;
