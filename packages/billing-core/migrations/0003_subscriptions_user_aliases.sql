-- RevenueCat subscriptions that converge on the truth: the current subscription per user and
-- source, the history of every change (and what caused it), and the links between the ids one
-- customer has used (app_user_id, original_app_user_id, aliases, $RCAnonymousID:…).

-- Every id Tally has seen for a customer points at the one Tally user it belongs to (the
-- "canonical" user whose wallet and subscription rows hold the state). A canonical user also
-- links to itself. Links are never re-pointed: a purchase under an anonymous id or an old alias
-- lands on the user the id was first linked to. See docs/revenuecat.md.
CREATE TABLE user_aliases (
  alias text PRIMARY KEY CONSTRAINT user_aliases_alias_ck CHECK (length(alias) BETWEEN 1 AND 255),
  user_id text NOT NULL CONSTRAINT user_aliases_user_fk REFERENCES users (id),
  -- The event that first named this id (NULL when linked by another path).
  inbox_event_id bigint CONSTRAINT user_aliases_inbox_event_fk REFERENCES inbox_events (id),
  created_at timestamptz NOT NULL DEFAULT now()
);

CREATE INDEX user_aliases_user_idx ON user_aliases (user_id);

-- The subscription a user has from one source, as last read from that source's API. One row
-- per (user, source); plan_id is NULL once the subscription is deactivated.
CREATE TABLE subscriptions (
  id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  user_id text NOT NULL CONSTRAINT subscriptions_user_fk REFERENCES users (id),
  source text NOT NULL CONSTRAINT subscriptions_source_ck CHECK (source IN ('revenuecat', 'stripe')),
  status text NOT NULL CONSTRAINT subscriptions_status_ck CHECK (status IN ('active', 'inactive')),
  plan_id text,
  product_id text,
  -- NULL with status active: a lifetime purchase.
  expires_at timestamptz,
  store text,
  auto_renew boolean NOT NULL DEFAULT false,
  billing_issue_detected_at timestamptz,
  -- The provider's own time of the read that was applied last (RevenueCat request_date_ms); an
  -- older read that finishes later never overwrites a newer one.
  provider_read_at timestamptz,
  created_at timestamptz NOT NULL DEFAULT now(),
  updated_at timestamptz NOT NULL DEFAULT now(),
  CONSTRAINT subscriptions_user_source_uq UNIQUE (user_id, source),
  CONSTRAINT subscriptions_active_plan_ck CHECK ((status = 'active') = (plan_id IS NOT NULL))
);

-- Append-only: one row per change of a subscription, with the state before and after and what
-- caused it (an inbox event, or an on-demand sync request). Support reads why a user has the
-- plan they have from here.
CREATE TABLE subscription_history (
  id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  user_id text NOT NULL CONSTRAINT subscription_history_user_fk REFERENCES users (id),
  source text NOT NULL CONSTRAINT subscription_history_source_ck CHECK (source IN ('revenuecat', 'stripe')),
  change text NOT NULL CONSTRAINT subscription_history_change_ck
    CHECK (change IN ('activated', 'renewed', 'plan_changed', 'updated', 'deactivated')),
  from_status text,
  to_status text NOT NULL,
  from_plan_id text,
  to_plan_id text,
  from_product_id text,
  to_product_id text,
  from_expires_at timestamptz,
  to_expires_at timestamptz,
  from_store text,
  to_store text,
  from_auto_renew boolean,
  to_auto_renew boolean NOT NULL,
  -- What caused it: 'inbox_event' (inbox_event_id set) or 'on_demand_sync' (request_id set).
  cause text NOT NULL CONSTRAINT subscription_history_cause_ck CHECK (cause IN ('inbox_event', 'on_demand_sync')),
  inbox_event_id bigint CONSTRAINT subscription_history_inbox_event_fk REFERENCES inbox_events (id),
  request_id text,
  provider_read_at timestamptz,
  created_at timestamptz NOT NULL DEFAULT now(),
  CONSTRAINT subscription_history_cause_ref_ck CHECK (
    (cause = 'inbox_event' AND inbox_event_id IS NOT NULL) OR (cause = 'on_demand_sync' AND request_id IS NOT NULL))
);

CREATE INDEX subscription_history_user_idx ON subscription_history (user_id, id);
CREATE INDEX subscription_history_inbox_event_idx ON subscription_history (inbox_event_id)
  WHERE inbox_event_id IS NOT NULL;

CREATE FUNCTION subscription_history_reject_change() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
  RAISE EXCEPTION 'subscription history is append-only (% rejected)', TG_OP
    USING ERRCODE = 'restrict_violation';
END;
$$;

CREATE TRIGGER subscription_history_append_only_trg
  BEFORE UPDATE OR DELETE ON subscription_history
  FOR EACH ROW EXECUTE FUNCTION subscription_history_reject_change();
