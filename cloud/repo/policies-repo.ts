import type { Queryable } from '../db/db.ts';
import type { AccountAiPolicy } from '../ai/routing/policy.ts';

/**
 * An account's enterprise policy: AI routing (allowed providers,
 * approved-infrastructure tags, fallback order), features switched off for
 * all its sites, and the support priority the vendor gave it. One row per
 * account; an account without a row has the open policy.
 */
export interface PolicyRow {
  account_id: string;
  ai_allowed_providers: string[] | null;
  ai_required_tags: string[];
  ai_fallback_order: string[];
  features_off: string[];
  support_priority: string | null;
  updated_at: string;
}

const COLS = 'account_id, ai_allowed_providers, ai_required_tags, ai_fallback_order, features_off, support_priority, updated_at';

export async function policyOf(q: Queryable, accountId: string): Promise<PolicyRow | null> {
  return (await q.query<PolicyRow>(`SELECT ${COLS} FROM account_policies WHERE account_id = $1`, [accountId])).rows[0] ?? null;
}

export const aiPolicyOf = (row: PolicyRow | null): AccountAiPolicy => ({
  allowed_providers: row?.ai_allowed_providers ?? null,
  required_tags: row?.ai_required_tags ?? [],
  fallback_order: row?.ai_fallback_order ?? [],
});

export interface PolicyChange {
  ai_allowed_providers?: string[] | null;
  ai_required_tags?: string[];
  ai_fallback_order?: string[];
  features_off?: string[];
  /** undefined: unchanged; null: back to the plan's */
  support_priority?: string | null;
}

/** Changes only the fields given; one statement, so two instances changing different fields at once both land. */
export async function updatePolicy(q: Queryable, accountId: string, c: PolicyChange, now: Date): Promise<PolicyRow> {
  const json = (v: unknown) => (v === undefined ? null : JSON.stringify(v));
  const r = await q.query<PolicyRow>(
    `INSERT INTO account_policies AS p (account_id, ai_allowed_providers, ai_required_tags, ai_fallback_order, features_off, support_priority, updated_at)
     VALUES ($1, $2::jsonb, COALESCE($3::jsonb, '[]'), COALESCE($4::jsonb, '[]'), COALESCE($5::jsonb, '[]'), $6, $8)
     ON CONFLICT (account_id) DO UPDATE SET
       ai_allowed_providers = CASE WHEN $9 THEN EXCLUDED.ai_allowed_providers ELSE p.ai_allowed_providers END,
       ai_required_tags = COALESCE($3::jsonb, p.ai_required_tags),
       ai_fallback_order = COALESCE($4::jsonb, p.ai_fallback_order),
       features_off = COALESCE($5::jsonb, p.features_off),
       support_priority = CASE WHEN $7 THEN EXCLUDED.support_priority ELSE p.support_priority END,
       updated_at = EXCLUDED.updated_at
     RETURNING ${COLS}`,
    [
      accountId,
      c.ai_allowed_providers === undefined ? null : json(c.ai_allowed_providers),
      json(c.ai_required_tags),
      json(c.ai_fallback_order),
      json(c.features_off),
      c.support_priority ?? null,
      c.support_priority !== undefined,
      now,
      c.ai_allowed_providers !== undefined,
    ],
  );
  return r.rows[0]!;
}

export interface AccountKeyRow {
  id: string;
  account_id: string;
  key_preview: string;
  label: string | null;
  created_at: string;
  last_used_at: string | null;
  revoked_at: string | null;
}

const KCOLS = 'id, account_id, key_preview, label, created_at, last_used_at, revoked_at';

export async function insertAccountKey(q: Queryable, k: { id: string; account_id: string; key_hash: string; key_preview: string; label: string | null }, now: Date): Promise<void> {
  await q.query('INSERT INTO account_api_keys (id, account_id, key_hash, key_preview, label, created_at) VALUES ($1, $2, $3, $4, $5, $6)', [k.id, k.account_id, k.key_hash, k.key_preview, k.label, now]);
}

export async function listAccountKeys(q: Queryable, accountId?: string): Promise<AccountKeyRow[]> {
  return (await q.query<AccountKeyRow>(`SELECT ${KCOLS} FROM account_api_keys ${accountId ? 'WHERE account_id = $1' : ''} ORDER BY created_at, id`, accountId ? [accountId] : [])).rows;
}

export async function revokeAccountKey(q: Queryable, id: string, now: Date): Promise<AccountKeyRow | null> {
  await q.query('UPDATE account_api_keys SET revoked_at = $2 WHERE id = $1 AND revoked_at IS NULL', [id, now]);
  return (await q.query<AccountKeyRow>(`SELECT ${KCOLS} FROM account_api_keys WHERE id = $1`, [id])).rows[0] ?? null;
}

/**
 * The account of a live key, with its name, best plan and policy bits, in
 * one round trip; `last_used_at` is written at most once a minute.
 */
export interface KeyAccount {
  key_id: string;
  account_id: string;
  name: string;
  plan: string | null;
  plan_priority: string | null;
  features: string[];
  support_priority: string | null;
}

export async function accountByKeyHash(q: Queryable, keyHash: string, now: Date): Promise<KeyAccount | null> {
  const r = await q.query<KeyAccount & { last_used_at: string | null }>(
    `SELECT k.id AS key_id, k.account_id, a.name, k.last_used_at, best.id AS plan, best.support_priority AS plan_priority,
            COALESCE((SELECT jsonb_agg(DISTINCT f) FROM licenses l JOIN plans p ON p.id = l.plan_id, jsonb_array_elements_text(p.features) f
                       WHERE l.account_id = k.account_id AND l.status = 'active' AND (l.expires_at IS NULL OR l.expires_at > $2)), '[]'::jsonb) AS features,
            ap.support_priority
       FROM account_api_keys k
       JOIN accounts a ON a.id = k.account_id
       LEFT JOIN account_policies ap ON ap.account_id = k.account_id
       LEFT JOIN LATERAL (SELECT p.id, p.support_priority FROM licenses l JOIN plans p ON p.id = l.plan_id
                           WHERE l.account_id = k.account_id AND l.status = 'active' AND (l.expires_at IS NULL OR l.expires_at > $2)
                           ORDER BY p.rank DESC, p.id LIMIT 1) best ON true
      WHERE k.key_hash = $1 AND k.revoked_at IS NULL`,
    [keyHash, now],
  );
  const row = r.rows[0];
  if (!row) return null;
  if (!row.last_used_at || Date.parse(row.last_used_at) < now.getTime() - 60_000) {
    await q.query('UPDATE account_api_keys SET last_used_at = $2 WHERE id = $1', [row.key_id, now]);
  }
  const { last_used_at: _l, ...out } = row;
  return out;
}
