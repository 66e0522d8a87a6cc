/**
 * Version 3: AI routing and releases. The AI provider registry and
 * per-account policy (enterprise controls), account API keys, releases,
 * the request log, cloud tasks (agency reports), support priorities, and
 * limits an account sets on its own scopes (`set_by`), which add to the
 * plan's limits instead of replacing them as the operator's do. The hot-path
 * function also reads the account's switched-off features and support
 * priority, so a signed request still costs one round trip; it answers the
 * plan by id and the configuration versions, and the instance keeps the
 * plans themselves until their version moves (a narrower row to decode on
 * every request).
 * gatehouse_hold and gatehouse_settle are an AI generation's quota hold and
 * its settlement, one round trip each (the same upserts as
 * counters-repo.ts, run in the database: each call is one atomic statement).
 */
export const version = 3;
// the name recorded in cloud_schema_migrations; migrations are applied by version
export const name = 'ai-policies-releases';
export const sql = `
CREATE TABLE ai_providers (
  id text PRIMARY KEY,
  position bigint GENERATED ALWAYS AS IDENTITY,
  kind text NOT NULL CHECK (kind IN ('openai', 'anthropic')),
  base_url text NOT NULL,
  api_key_env text NOT NULL,
  models jsonb NOT NULL,
  tags jsonb NOT NULL,
  enabled boolean NOT NULL DEFAULT true,
  created_at timestamptz NOT NULL DEFAULT now(),
  updated_at timestamptz NOT NULL DEFAULT now()
);

CREATE TABLE account_policies (
  account_id text PRIMARY KEY REFERENCES accounts(id),
  ai_allowed_providers jsonb,
  ai_required_tags jsonb NOT NULL DEFAULT '[]',
  ai_fallback_order jsonb NOT NULL DEFAULT '[]',
  features_off jsonb NOT NULL DEFAULT '[]',
  support_priority text,
  updated_at timestamptz NOT NULL DEFAULT now()
);

CREATE TABLE account_api_keys (
  id text PRIMARY KEY,
  account_id text NOT NULL REFERENCES accounts(id),
  key_hash text NOT NULL UNIQUE,
  key_preview text NOT NULL,
  label text,
  created_at timestamptz NOT NULL DEFAULT now(),
  last_used_at timestamptz,
  revoked_at timestamptz
);
CREATE INDEX account_api_keys_account ON account_api_keys (account_id);

CREATE TABLE releases (
  id text PRIMARY KEY,
  product text NOT NULL,
  channel text NOT NULL,
  version text NOT NULL,
  manifest jsonb NOT NULL,
  signed jsonb NOT NULL,
  published_at timestamptz NOT NULL,
  updated_at timestamptz NOT NULL,
  UNIQUE (product, channel, version)
);

CREATE TABLE request_log (
  id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  at timestamptz NOT NULL,
  request_id text NOT NULL,
  account_id text,
  site_id text,
  auth text NOT NULL,
  endpoint text NOT NULL,
  method text NOT NULL,
  status integer NOT NULL,
  code text,
  ms real NOT NULL
);
CREATE INDEX request_log_account ON request_log (account_id, id) WHERE account_id IS NOT NULL;
CREATE INDEX request_log_at ON request_log (at);

CREATE TABLE cloud_tasks (
  id text PRIMARY KEY,
  account_id text NOT NULL REFERENCES accounts(id),
  kind text NOT NULL,
  params jsonb NOT NULL,
  status text NOT NULL CHECK (status IN ('queued', 'running', 'done', 'failed')),
  attempts integer NOT NULL DEFAULT 0,
  result jsonb,
  result_csv text,
  result_rows integer,
  error text,
  created_at timestamptz NOT NULL,
  started_at timestamptz,
  finished_at timestamptz,
  expires_at timestamptz NOT NULL
);
CREATE INDEX cloud_tasks_account ON cloud_tasks (account_id, created_at);
CREATE INDEX cloud_tasks_pending ON cloud_tasks (created_at) WHERE status IN ('queued', 'running');

ALTER TABLE plans ADD COLUMN support_priority text;
UPDATE plans SET support_priority = CASE id WHEN 'enterprise' THEN 'p1' WHEN 'agency' THEN 'p2' WHEN 'pro' THEN 'p3' WHEN 'free' THEN 'p4' END WHERE support_priority IS NULL;

ALTER TABLE usage_limits ADD COLUMN set_by text NOT NULL DEFAULT 'operator' CHECK (set_by IN ('operator', 'account'));
ALTER TABLE usage_limits DROP CONSTRAINT usage_limits_pkey;
ALTER TABLE usage_limits ADD PRIMARY KEY (scope, subject, metric, period, set_by);

CREATE INDEX usage_events_time ON usage_events (occurred_at);

-- A version per kind of configuration, bumped in the same transaction as any change to it, so an
-- instance may keep what it read until the version it sees on a request moves (no stale answer).
CREATE TABLE config_versions (
  name text PRIMARY KEY,
  version bigint NOT NULL
);
CREATE FUNCTION gatehouse_bump_config() RETURNS trigger LANGUAGE plpgsql AS $fn$
BEGIN
  INSERT INTO config_versions AS v (name, version) VALUES (TG_ARGV[0], 1)
  ON CONFLICT (name) DO UPDATE SET version = v.version + 1;
  RETURN NULL;
END
$fn$;
CREATE TRIGGER ai_providers_version AFTER INSERT OR UPDATE OR DELETE ON ai_providers FOR EACH STATEMENT EXECUTE FUNCTION gatehouse_bump_config('ai');
CREATE TRIGGER account_policies_version AFTER INSERT OR UPDATE OR DELETE ON account_policies FOR EACH STATEMENT EXECUTE FUNCTION gatehouse_bump_config('ai');
CREATE TRIGGER model_classes_version AFTER INSERT OR UPDATE ON cloud_settings FOR EACH ROW WHEN (NEW.key = 'ai_model_classes') EXECUTE FUNCTION gatehouse_bump_config('ai');
CREATE TRIGGER usage_limits_version AFTER INSERT OR UPDATE OR DELETE ON usage_limits FOR EACH STATEMENT EXECUTE FUNCTION gatehouse_bump_config('limits');
CREATE TRIGGER plans_version AFTER INSERT OR UPDATE OR DELETE ON plans FOR EACH STATEMENT EXECUTE FUNCTION gatehouse_bump_config('plans');
INSERT INTO config_versions (name, version) VALUES ('ai', 1), ('limits', 1), ('plans', 1);

DROP FUNCTION gatehouse_authenticate(text, text, timestamptz, timestamptz);
CREATE FUNCTION gatehouse_authenticate(p_key_id text, p_nonce text, p_expires timestamptz, p_now timestamptz)
RETURNS TABLE (
  id text, key_id text, secret_enc text, url text, name text, environment text, status text,
  license_id text, account_id text, department text, project text, version text, products_in_use jsonb,
  outbox_depth integer, last_sync_at timestamptz, created_at timestamptz,
  l_id text, l_key_preview text, l_account_id text, l_plan_id text, l_site_limit integer, l_status text, l_expires_at timestamptz,
  off text[], a_features_off jsonb, a_support_priority text, config jsonb, nonce_fresh boolean
)
LANGUAGE plpgsql AS $fn$
#variable_conflict use_column
DECLARE
  claimed boolean := false;
BEGIN
  IF EXISTS (SELECT 1 FROM sites s WHERE s.key_id = p_key_id AND s.status = 'active') THEN
    INSERT INTO request_nonces AS n (key_id, nonce, expires_at) VALUES (p_key_id, p_nonce, p_expires)
    ON CONFLICT (key_id, nonce) DO UPDATE SET expires_at = EXCLUDED.expires_at WHERE n.expires_at <= p_now;
    claimed := FOUND;
  END IF;
  RETURN QUERY
    SELECT s.id, s.key_id, s.secret_enc, s.url, s.name, s.environment, s.status,
           s.license_id, s.account_id, s.department, s.project, s.version, s.products_in_use,
           s.outbox_depth, s.last_sync_at, s.created_at,
           l.id, l.key_preview, l.account_id, l.plan_id, l.site_limit, l.status, l.expires_at,
           ARRAY(SELECT ps.product FROM product_switches ps
                  WHERE ps.enabled = false
                    AND ((ps.scope = 'site' AND ps.subject = s.id) OR (ps.scope = 'account' AND ps.subject = s.account_id))),
           ap.features_off, ap.support_priority,
           (SELECT jsonb_object_agg(v.name, v.version) FROM config_versions v),
           claimed
      FROM sites s
      LEFT JOIN licenses l ON l.id = s.license_id
      LEFT JOIN account_policies ap ON ap.account_id = s.account_id
     WHERE s.key_id = p_key_id;
END
$fn$;

-- Adds p_amount to 'reserved' of every counter in p_deltas (sorted by the caller, so concurrent holds lock
-- rows in one order), each only while used + reserved stays within its limit, then records the reservation.
-- A counter that would overshoot raises GH001 with its index as DETAIL: the whole call rolls back.
CREATE FUNCTION gatehouse_hold(p_id text, p_site text, p_metric text, p_amount bigint, p_deltas jsonb, p_expires timestamptz, p_now timestamptz)
RETURNS void
LANGUAGE plpgsql AS $fn$
DECLARE
  d jsonb;
  i integer := 0;
BEGIN
  FOR d IN SELECT value FROM jsonb_array_elements(p_deltas) LOOP
    INSERT INTO usage_counters AS c (scope, subject, metric, period, period_start, reserved)
    VALUES (d->>'scope', d->>'subject', d->>'metric', d->>'period', (d->>'period_start')::timestamptz, p_amount)
    ON CONFLICT (scope, subject, metric, period, period_start)
    DO UPDATE SET reserved = c.reserved + EXCLUDED.reserved
    WHERE d->>'limit' IS NULL OR c.used + c.reserved + EXCLUDED.reserved <= (d->>'limit')::bigint;
    IF NOT FOUND THEN
      RAISE EXCEPTION 'quota' USING ERRCODE = 'GH001', DETAIL = i::text;
    END IF;
    i := i + 1;
  END LOOP;
  INSERT INTO usage_reservations (id, site_id, metric, amount, counters, status, expires_at, created_at)
  VALUES (p_id, p_site, p_metric, p_amount,
          (SELECT COALESCE(jsonb_agg(v - 'limit'), '[]'::jsonb) FROM jsonb_array_elements(p_deltas) v), 'held', p_expires, p_now);
END
$fn$;

-- Settles a hold with the usage event of what was actually used, exactly once: the hold leaves its counters
-- (when it was still held), the event is inserted (its primary key makes a repeat a no-op) and, when new,
-- counted. p_deltas: every counter touched, sorted, with 'reserved' (to take off) and 'used' (to add).
-- Answers 'settled', 'late' (the sweeper had released the hold: the event is recorded anyway) or 'none'.
CREATE FUNCTION gatehouse_settle(p_id text, p_site text, p_event jsonb, p_deltas jsonb, p_now timestamptz)
RETURNS text
LANGUAGE plpgsql AS $fn$
DECLARE
  d jsonb;
  held boolean;
  counted boolean;
BEGIN
  UPDATE usage_reservations SET status = 'settled', closed_at = p_now WHERE id = p_id AND site_id = p_site AND status = 'held';
  held := FOUND;
  IF NOT held THEN
    UPDATE usage_reservations SET status = 'settled', closed_at = p_now WHERE id = p_id AND site_id = p_site AND status = 'released';
    IF NOT FOUND THEN
      RETURN 'none';
    END IF;
  END IF;
  INSERT INTO usage_events (site_id, event_id, event, product, feature, model, units, tokens_input, tokens_output, units_metric, occurred_at, received_at)
  VALUES (p_site, p_event->>'event_id', p_event->>'event', p_event->>'product', p_event->>'feature', p_event->>'model', (p_event->>'units')::bigint,
          (p_event->>'tokens_input')::bigint, (p_event->>'tokens_output')::bigint, p_event->>'units_metric', (p_event->>'timestamp')::timestamptz, p_now)
  ON CONFLICT (site_id, event_id) DO NOTHING;
  counted := FOUND;
  FOR d IN SELECT value FROM jsonb_array_elements(p_deltas) LOOP
    CONTINUE WHEN NOT held AND NOT counted;
    INSERT INTO usage_counters AS c (scope, subject, metric, period, period_start, used, reserved)
    VALUES (d->>'scope', d->>'subject', d->>'metric', d->>'period', (d->>'period_start')::timestamptz,
            CASE WHEN counted THEN GREATEST((d->>'used')::bigint, 0) ELSE 0 END, 0)
    ON CONFLICT (scope, subject, metric, period, period_start)
    DO UPDATE SET used = c.used + CASE WHEN counted THEN (d->>'used')::bigint ELSE 0 END,
                  reserved = GREATEST(c.reserved - CASE WHEN held THEN (d->>'reserved')::bigint ELSE 0 END, 0);
  END LOOP;
  RETURN CASE WHEN held THEN 'settled' ELSE 'late' END;
END
$fn$;
`;
