-- Priced usage (docs/features.md): one row per use of a catalog feature an app records
-- (`POST /v1/users/{userId}/usage`), with the quantities, the prices and the catalog version it
-- was charged at, whether the free allowance covered it, and the answer a retry gets. The rows
-- are what the free allowance counts (free uses of a group in a UTC day or month that were not
-- given back) and what the usage reports read (never a scan of the ledger). `source` leaves room
-- for holds by estimate, whose uses count the same way.
--
-- Live-safe: a new table; old code never reads or writes it.
CREATE TABLE feature_uses (
  id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  user_id text NOT NULL,
  source text NOT NULL CONSTRAINT feature_uses_source_ck CHECK (source IN ('usage', 'hold')),
  -- The app's reference (a usage's ledger reference is `usage:{reference}`).
  reference text NOT NULL CONSTRAINT feature_uses_reference_ck CHECK (length(reference) BETWEEN 1 AND 200),
  feature text NOT NULL CONSTRAINT feature_uses_feature_ck CHECK (length(feature) BETWEEN 1 AND 64),
  variant text CONSTRAINT feature_uses_variant_ck CHECK (length(variant) BETWEEN 1 AND 64),
  quantities jsonb NOT NULL,
  prices jsonb NOT NULL,
  per integer NOT NULL CONSTRAINT feature_uses_per_ck CHECK (per > 0),
  price_version text NOT NULL,
  -- Tokens charged: 0 on the free tier (and for zero quantities).
  cost bigint NOT NULL CONSTRAINT feature_uses_cost_ck CHECK (cost >= 0),
  free_tier boolean NOT NULL,
  -- The allowance the use counts against: its group and its period (YYYY-MM-DD or YYYY-MM, UTC).
  allowance_group text,
  allowance_period text,
  -- A use given back (a released hold) no longer counts against the allowance.
  given_back boolean NOT NULL DEFAULT false,
  ledger_reference text,
  answer_balance bigint NOT NULL,
  answer_available bigint NOT NULL,
  usage_day date NOT NULL,
  created_at timestamptz NOT NULL DEFAULT now(),
  CONSTRAINT feature_uses_reference_uq UNIQUE (source, reference),
  CONSTRAINT feature_uses_free_ck CHECK (NOT free_tier OR cost = 0),
  CONSTRAINT feature_uses_allowance_ck CHECK ((allowance_group IS NULL) = (allowance_period IS NULL)),
  -- A usage's cost is its one debit; a hold's is captured through the hold's own entries.
  CONSTRAINT feature_uses_ledger_ck CHECK (source <> 'usage' OR (cost > 0) = (ledger_reference IS NOT NULL))
);
CREATE INDEX feature_uses_allowance_idx ON feature_uses (user_id, allowance_group, allowance_period)
  WHERE free_tier AND NOT given_back;
CREATE INDEX feature_uses_user_day_idx ON feature_uses (user_id, usage_day);
CREATE INDEX feature_uses_day_idx ON feature_uses (usage_day, feature);

-- A studio request is a use of its feature (image_edit, music_clip, music_full): the allowance
-- group it counted against (NULL on rows from before: their kind, `image_edit` or `music`, was it).
ALTER TABLE studio_requests ADD COLUMN allowance_group text;

-- Holds by estimate (docs/features.md): `priced` holds reserve a feature's estimated cost (0 for a
-- use inside the free allowance: it reserves the use), keep their prices in feature_uses (source
-- 'hold', reference the hold's id), and are captured at the actual cost at those prices: what the
-- hold covers is captured, the excess is taken from what is available (`excess`), and what is
-- still missing is recorded (`debt`, and a take-back shortfall of source 'priced_capture': the
-- place debt will live). Old code never places a priced hold, so the relaxed CHECKs (NOT VALID
-- here, validated by 0037) change nothing it writes. ACCESS EXCLUSIVE for an instant on holds and
-- take_back_shortfalls; lock_timeout keeps it from queueing behind a long read.
SET LOCAL lock_timeout = '5s';
ALTER TABLE holds ADD COLUMN priced boolean NOT NULL DEFAULT false;
ALTER TABLE holds ADD COLUMN excess bigint CONSTRAINT holds_excess_ck CHECK (excess >= 0);
ALTER TABLE holds ADD COLUMN debt bigint CONSTRAINT holds_debt_ck CHECK (debt >= 0);
ALTER TABLE holds DROP CONSTRAINT holds_amount_ck;
ALTER TABLE holds ADD CONSTRAINT holds_amount_ck CHECK (amount > 0 OR (priced AND amount = 0)) NOT VALID;
ALTER TABLE holds DROP CONSTRAINT holds_captured_ck;
ALTER TABLE holds ADD CONSTRAINT holds_captured_ck
  CHECK (captured >= 0 AND captured <= amount AND (captured > 0 OR priced)) NOT VALID;
ALTER TABLE holds DROP CONSTRAINT holds_captured_ck2;
ALTER TABLE holds ADD CONSTRAINT holds_captured_ck2
  CHECK ((status = 'captured') = (captured IS NOT NULL AND ledger_reference IS NOT NULL)) NOT VALID;
ALTER TABLE take_back_shortfalls DROP CONSTRAINT take_back_shortfalls_source_ck;
ALTER TABLE take_back_shortfalls ADD CONSTRAINT take_back_shortfalls_source_ck
  CHECK (source IN ('stripe_refund', 'stripe_dispute', 'revenuecat_refund', 'priced_capture')) NOT VALID;
