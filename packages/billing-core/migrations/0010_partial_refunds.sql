-- Partial refunds of one-off Stripe packs. A charge.refunded event carries the charge's
-- cumulative `amount_refunded`; the payment remembers the cumulative amount it has applied, and
-- is `partially_refunded` until Stripe reports the whole charge refunded. The tokens a refund
-- reverses are proportional to the money refunded (floored), and are split, as before, between
-- `tokens_refunded` (taken back) and `refund_shortfall` (already spent). See docs/stripe.md.
ALTER TABLE payments
  ADD COLUMN amount_refunded_minor bigint NOT NULL DEFAULT 0
    CONSTRAINT payments_amount_refunded_minor_ck CHECK (amount_refunded_minor >= 0);

ALTER TABLE payments DROP CONSTRAINT payments_status_ck;
ALTER TABLE payments ADD CONSTRAINT payments_status_ck
  CHECK (status IN ('succeeded', 'partially_refunded', 'refunded'));

-- Rows refunded in full before this migration refunded their whole amount.
UPDATE payments SET amount_refunded_minor = amount_minor WHERE status = 'refunded';
