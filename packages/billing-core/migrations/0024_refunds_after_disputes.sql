-- Refunds, chargebacks and annual installments together (issue 30, items 1-2).
--
-- A partial refund of an annual invoice scales each installment not granted yet to its share of
-- the money not refunded: tokens = floor(full_tokens × (amount − amount_refunded) / amount).
-- `full_tokens` keeps the installment's original share, so successive partial refunds are each
-- computed from it and never compound their rounding. A share can floor to 0 (a refund of
-- almost everything): such an installment is marked granted without a ledger entry.
ALTER TABLE stripe_installments ADD COLUMN full_tokens bigint;
UPDATE stripe_installments SET full_tokens = tokens;
ALTER TABLE stripe_installments ALTER COLUMN full_tokens SET NOT NULL;
ALTER TABLE stripe_installments ADD CONSTRAINT stripe_installments_full_tokens_ck CHECK (full_tokens > 0);
ALTER TABLE stripe_installments DROP CONSTRAINT stripe_installments_tokens_ck;
ALTER TABLE stripe_installments ADD CONSTRAINT stripe_installments_tokens_ck
  CHECK (tokens >= 0 AND tokens <= full_tokens);

-- A reinstated chargeback gives back only what the payment still owes after its refunds (a
-- dispute won and then refunded gives back nothing): `tokens_reinstated` is at most
-- `tokens_taken`, no longer exactly it; the rest stays taken back, for the refunds.
ALTER TABLE stripe_disputes DROP CONSTRAINT stripe_disputes_reinstated_exact_ck;
ALTER TABLE stripe_disputes ADD CONSTRAINT stripe_disputes_reinstated_le_taken_ck CHECK (
  (reinstated_at IS NULL AND tokens_reinstated = 0) OR (reinstated_at IS NOT NULL AND tokens_reinstated <= tokens_taken));
