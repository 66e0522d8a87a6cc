/**
 * Version 1: the ledger of part 1 (sites, licenses, plans, products, signing
 * keys, nonces, usage, quotas, idempotency). Forward-only: a released
 * migration is never edited; a change is a new file.
 */
export const version = 1;
export const name = 'ledger';
export const sql = `
CREATE TABLE cloud_settings (
  key text PRIMARY KEY,
  value text NOT NULL
);

CREATE TABLE accounts (
  id text PRIMARY KEY,
  name text NOT NULL,
  created_at timestamptz NOT NULL DEFAULT now()
);

CREATE TABLE plans (
  id text PRIMARY KEY,
  rank integer NOT NULL,
  features jsonb NOT NULL,
  products jsonb NOT NULL,
  site_limit integer NOT NULL CHECK (site_limit >= 0),
  limits jsonb NOT NULL,
  update_channels jsonb NOT NULL,
  updated_at timestamptz NOT NULL DEFAULT now()
);

CREATE TABLE licenses (
  id text PRIMARY KEY,
  key_hash text NOT NULL UNIQUE,
  key_preview text NOT NULL,
  account_id text NOT NULL REFERENCES accounts(id),
  plan_id text NOT NULL REFERENCES plans(id),
  site_limit integer CHECK (site_limit >= 0),
  status text NOT NULL CHECK (status IN ('active', 'revoked')),
  expires_at timestamptz,
  created_at timestamptz NOT NULL DEFAULT now(),
  revoked_at timestamptz
);
CREATE INDEX licenses_account ON licenses (account_id);

CREATE TABLE sites (
  id text PRIMARY KEY,
  key_id text NOT NULL UNIQUE,
  secret_enc text,
  url text NOT NULL,
  name text,
  environment text NOT NULL CHECK (environment IN ('production', 'staging')),
  status text NOT NULL CHECK (status IN ('active', 'disconnected')),
  license_id text REFERENCES licenses(id),
  account_id text REFERENCES accounts(id),
  department text,
  project text,
  version text,
  products_in_use jsonb NOT NULL DEFAULT '[]',
  outbox_depth integer,
  last_sync_at timestamptz,
  created_at timestamptz NOT NULL DEFAULT now(),
  disconnected_at timestamptz,
  CHECK (status = 'active' OR secret_enc IS NULL)
);
CREATE INDEX sites_license ON sites (license_id) WHERE license_id IS NOT NULL;
CREATE INDEX sites_account ON sites (account_id) WHERE account_id IS NOT NULL;

CREATE TABLE product_switches (
  scope text NOT NULL CHECK (scope IN ('account', 'site')),
  subject text NOT NULL,
  product text NOT NULL,
  enabled boolean NOT NULL,
  updated_at timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (scope, subject, product)
);

CREATE TABLE request_nonces (
  key_id text NOT NULL,
  nonce text NOT NULL,
  expires_at timestamptz NOT NULL,
  PRIMARY KEY (key_id, nonce)
);
CREATE INDEX request_nonces_expiry ON request_nonces (expires_at);

CREATE TABLE signing_keys (
  kid text PRIMARY KEY,
  public_x text NOT NULL,
  private_enc text NOT NULL,
  created_at timestamptz NOT NULL DEFAULT now(),
  retired_at timestamptz,
  publish_until timestamptz
);
CREATE UNIQUE INDEX signing_keys_one_active ON signing_keys ((true)) WHERE retired_at IS NULL;

CREATE TABLE usage_events (
  site_id text NOT NULL,
  event_id text NOT NULL,
  event text NOT NULL,
  product text NOT NULL,
  feature text NOT NULL,
  model text NOT NULL,
  units bigint NOT NULL CHECK (units >= 0),
  tokens_input bigint NOT NULL CHECK (tokens_input >= 0),
  tokens_output bigint NOT NULL CHECK (tokens_output >= 0),
  units_metric text,
  occurred_at timestamptz NOT NULL,
  received_at timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (site_id, event_id)
);
CREATE INDEX usage_events_site_time ON usage_events (site_id, occurred_at);

CREATE TABLE usage_counters (
  scope text NOT NULL,
  subject text NOT NULL,
  metric text NOT NULL,
  period text NOT NULL,
  period_start timestamptz NOT NULL,
  used bigint NOT NULL DEFAULT 0 CHECK (used >= 0),
  reserved bigint NOT NULL DEFAULT 0 CHECK (reserved >= 0),
  PRIMARY KEY (scope, subject, metric, period, period_start)
);

CREATE TABLE usage_limits (
  scope text NOT NULL CHECK (scope IN ('account', 'department', 'site', 'project')),
  subject text NOT NULL,
  metric text NOT NULL,
  period text NOT NULL CHECK (period IN ('day', 'month')),
  limit_value bigint NOT NULL CHECK (limit_value >= 0),
  updated_at timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (scope, subject, metric, period)
);

CREATE TABLE usage_reservations (
  id text PRIMARY KEY,
  site_id text NOT NULL,
  metric text NOT NULL,
  amount bigint NOT NULL CHECK (amount >= 0),
  counters jsonb NOT NULL,
  status text NOT NULL CHECK (status IN ('held', 'settled', 'released')),
  expires_at timestamptz NOT NULL,
  created_at timestamptz NOT NULL DEFAULT now(),
  closed_at timestamptz
);
CREATE INDEX usage_reservations_held ON usage_reservations (expires_at) WHERE status = 'held';

CREATE TABLE idempotency_keys (
  site_id text NOT NULL,
  key text NOT NULL,
  body_hash text NOT NULL,
  status integer,
  answer jsonb,
  created_at timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (site_id, key)
);
CREATE INDEX idempotency_keys_created ON idempotency_keys (created_at);
`;
