import { ProviderRecord } from '../ai/provider-record.ts';
import { ModelClasses } from '../ai/routing/policy.ts';
import type { Queryable } from '../db/db.ts';
import { isUniqueViolation } from '../db/db.ts';
import { CloudError } from '../errors.ts';
import type { PolicyRow } from './policies-repo.ts';

/**
 * The operator's AI provider registry (in registry order) and model classes.
 * Keys are never here: a provider names the environment variable that holds
 * its key, read by the service when it calls.
 */
const CLASSES_SETTING = 'ai_model_classes';

export async function insertProvider(q: Queryable, p: ProviderRecord, now: Date): Promise<void> {
  try {
    await q.query(
      `INSERT INTO ai_providers (id, kind, base_url, api_key_env, models, tags, enabled, created_at, updated_at) VALUES ($1, $2, $3, $4, $5::jsonb, $6::jsonb, $7, $8, $8)`,
      [p.id, p.kind, p.base_url, p.api_key_env, JSON.stringify(p.models), JSON.stringify(p.tags), p.enabled, now],
    );
  } catch (e) {
    if (isUniqueViolation(e))
      throw new CloudError(
        'conflict',
        `a provider '${p.id}' is already registered: remove it first, or pick another id`,
      );
    throw e;
  }
}

export async function listProviders(q: Queryable): Promise<ProviderRecord[]> {
  const r = await q.query(
    'SELECT id, kind, base_url, api_key_env, models, tags, enabled FROM ai_providers ORDER BY position',
  );
  return r.rows.map((row) => ProviderRecord.parse(row));
}

export async function removeProvider(q: Queryable, id: string): Promise<boolean> {
  return (await q.query('DELETE FROM ai_providers WHERE id = $1', [id])).rowCount > 0;
}

export async function setProviderEnabled(q: Queryable, id: string, enabled: boolean, now: Date): Promise<boolean> {
  return (
    (await q.query('UPDATE ai_providers SET enabled = $2, updated_at = $3 WHERE id = $1', [id, enabled, now]))
      .rowCount > 0
  );
}

export async function modelClasses(q: Queryable): Promise<ModelClasses> {
  const v = (await q.query<{ value: string }>('SELECT value FROM cloud_settings WHERE key = $1', [CLASSES_SETTING]))
    .rows[0]?.value;
  return v ? ModelClasses.parse(JSON.parse(v)) : {};
}

export async function saveModelClasses(q: Queryable, classes: ModelClasses): Promise<void> {
  await q.query(
    'INSERT INTO cloud_settings (key, value) VALUES ($1, $2) ON CONFLICT (key) DO UPDATE SET value = EXCLUDED.value',
    [CLASSES_SETTING, JSON.stringify(classes)],
  );
}

export interface RoutingData {
  providers: ProviderRecord[];
  policy: PolicyRow | null;
  classes: ModelClasses;
}

/** What routing an AI request needs (registry, the account's policy, model classes), in one round trip. */
export async function routingData(q: Queryable, accountId: string | null): Promise<RoutingData> {
  const r = await q.query<{ providers: unknown[]; policy: PolicyRow | null; classes: string | null }>(
    `SELECT (SELECT COALESCE(jsonb_agg(jsonb_build_object('id', id, 'kind', kind, 'base_url', base_url, 'api_key_env', api_key_env,
                                                          'models', models, 'tags', tags, 'enabled', enabled) ORDER BY position), '[]'::jsonb)
               FROM ai_providers) AS providers,
            (SELECT to_jsonb(p) FROM account_policies p WHERE p.account_id = $1) AS policy,
            (SELECT value FROM cloud_settings WHERE key = $2) AS classes`,
    [accountId ?? '', CLASSES_SETTING],
  );
  const row = r.rows[0]!;
  return {
    providers: row.providers.map((p) => ProviderRecord.parse(p)),
    policy: row.policy,
    classes: row.classes ? ModelClasses.parse(JSON.parse(row.classes)) : {},
  };
}

export interface OvershootSummary {
  provider: string;
  /** settlements where the provider reported more output than max_tokens allowed, or more tokens than the hold */
  count: number;
  last_at: string;
  /** the largest output it reported, and what that request allowed */
  worst_reported_output: number;
  worst_allowed_output: number;
}

/** What providers.list shows the operator: every provider that ever answered more than it was allowed (gatehouse_settle records each time). */
export async function providerOvershoots(q: Queryable): Promise<OvershootSummary[]> {
  const r = await q.query<OvershootSummary>(
    `SELECT DISTINCT ON (provider) provider, count(*) OVER w::int AS count, max(at) OVER w AS last_at,
            reported_output AS worst_reported_output, allowed_output AS worst_allowed_output
       FROM provider_overshoots
     WINDOW w AS (PARTITION BY provider)
      ORDER BY provider, reported_output - allowed_output DESC`,
  );
  return r.rows;
}
