import type { Db, Queryable } from '../db/db.ts';
import { layerPolicies, mergeLayer, type PolicyLayer } from '../domain/policy-layers.ts';
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

const COLS =
  'account_id, ai_allowed_providers, ai_required_tags, ai_fallback_order, features_off, support_priority, updated_at';

export async function policyOf(q: Queryable, accountId: string): Promise<PolicyRow | null> {
  return (
    (await q.query<PolicyRow>(`SELECT ${COLS} FROM account_policies WHERE account_id = $1`, [accountId])).rows[0] ??
    null
  );
}

export const aiPolicyOf = (row: PolicyRow | null): AccountAiPolicy => ({
  allowed_providers: row?.ai_allowed_providers ?? null,
  required_tags: row?.ai_required_tags ?? [],
  fallback_order: row?.ai_fallback_order ?? [],
});

export interface PolicyChange extends PolicyLayer {
  /** undefined: unchanged; null: back to the plan's (the operator's only) */
  support_priority?: string | null;
}

export interface PolicyLayers {
  operator: PolicyLayer;
  account: PolicyLayer;
}

/**
 * Changes the fields given in one layer (the operator's or the account's) and
 * stores the effective policy both layers make in the columns every reader
 * uses. The row is locked for the change, so two instances changing
 * different fields or layers at once both land; `guard` sees the layers as
 * they are under the lock and may refuse the change.
 */
export async function updatePolicy(
  db: Db,
  accountId: string,
  layer: keyof PolicyLayers,
  c: PolicyChange,
  now: Date,
  guard?: (current: PolicyLayers) => void,
): Promise<void> {
  const { support_priority, ...change } = c;
  await db.transaction(async (tx) => {
    await tx.query(
      'INSERT INTO account_policies (account_id, updated_at) VALUES ($1, $2) ON CONFLICT (account_id) DO NOTHING',
      [accountId, now],
    );
    const row = (
      await tx.query<{ operator_layer: PolicyLayer; account_layer: PolicyLayer }>(
        'SELECT operator_layer, account_layer FROM account_policies WHERE account_id = $1 FOR UPDATE',
        [accountId],
      )
    ).rows[0]!;
    const current = { operator: row.operator_layer, account: row.account_layer };
    guard?.(current);
    const next = { ...current, [layer]: mergeLayer(current[layer], change) };
    const e = layerPolicies(next.operator, next.account);
    await tx.query(
      `UPDATE account_policies SET operator_layer = $2::jsonb, account_layer = $3::jsonb, ai_allowed_providers = $4::jsonb, ai_required_tags = $5::jsonb, ai_fallback_order = $6::jsonb,
              features_off = $7::jsonb, support_priority = CASE WHEN $8 THEN $9 ELSE support_priority END, updated_at = $10
        WHERE account_id = $1`,
      [
        accountId,
        JSON.stringify(next.operator),
        JSON.stringify(next.account),
        JSON.stringify(e.allowed_providers),
        JSON.stringify(e.required_tags),
        JSON.stringify(e.fallback_order),
        JSON.stringify(e.features_off),
        support_priority !== undefined,
        support_priority ?? null,
        now,
      ],
    );
  });
}

/** Both layers of the account's policy (empty ones when it has none). */
export async function policyLayersOf(q: Queryable, accountId: string): Promise<PolicyLayers> {
  const row = (
    await q.query<{ operator_layer: PolicyLayer; account_layer: PolicyLayer }>(
      'SELECT operator_layer, account_layer FROM account_policies WHERE account_id = $1',
      [accountId],
    )
  ).rows[0];
  return { operator: row?.operator_layer ?? {}, account: row?.account_layer ?? {} };
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

export async function insertAccountKey(
  q: Queryable,
  k: { id: string; account_id: string; key_hash: string; key_preview: string; label: string | null },
  now: Date,
): Promise<void> {
  await q.query(
    'INSERT INTO account_api_keys (id, account_id, key_hash, key_preview, label, created_at) VALUES ($1, $2, $3, $4, $5, $6)',
    [k.id, k.account_id, k.key_hash, k.key_preview, k.label, now],
  );
}

export async function listAccountKeys(q: Queryable, accountId?: string): Promise<AccountKeyRow[]> {
  return (
    await q.query<AccountKeyRow>(
      `SELECT ${KCOLS} FROM account_api_keys ${accountId ? 'WHERE account_id = $1' : ''} ORDER BY created_at, id`,
      accountId ? [accountId] : [],
    )
  ).rows;
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
