-- Validates the CHECKs 0036 replaced NOT VALID (old rows satisfy them: each is wider than the one it
-- replaced). VALIDATE CONSTRAINT takes SHARE UPDATE EXCLUSIVE: reads and writes go on while it scans.
ALTER TABLE holds VALIDATE CONSTRAINT holds_amount_ck;
ALTER TABLE holds VALIDATE CONSTRAINT holds_captured_ck;
ALTER TABLE holds VALIDATE CONSTRAINT holds_captured_ck2;
ALTER TABLE take_back_shortfalls VALIDATE CONSTRAINT take_back_shortfalls_source_ck;
