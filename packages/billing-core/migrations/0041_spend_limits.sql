-- Spend limits per user (docs/spend-limits.md): a user's own daily and monthly limits, and the
-- tokens spent per user and UTC day, counted by the posting statement in the spend's own
-- transaction, under the wallet lock (debits, usage, captures, a priced capture's excess, studio
-- debits; a studio debit given back stops counting). A month is the sum of its days, so a spend
-- writes one counter and a limit check reads at most 31 rows of one index, never the ledger.
--
-- Live-safe: two new tables, no constraint on an existing one. Old code neither reads nor writes
-- them: what old replicas spend during a rollout is not counted (counting starts with the new code).
CREATE TABLE spend_limits (
  user_id text PRIMARY KEY CONSTRAINT spend_limits_user_ck CHECK (length(user_id) BETWEEN 1 AND 255),
  -- NULL: the default (SPEND_LIMIT_DAILY / SPEND_LIMIT_MONTHLY) applies.
  daily bigint CONSTRAINT spend_limits_daily_ck CHECK (daily >= 0),
  monthly bigint CONSTRAINT spend_limits_monthly_ck CHECK (monthly >= 0),
  updated_at timestamptz NOT NULL DEFAULT now()
);

CREATE TABLE spend_days (
  user_id text NOT NULL,
  -- The UTC day of the ledger entries counted here (their created_at, the database clock).
  day date NOT NULL,
  spent bigint NOT NULL CONSTRAINT spend_days_spent_ck CHECK (spent >= 0),
  CONSTRAINT spend_days_pk PRIMARY KEY (user_id, day)
);
