import type { CloudProduct } from '../../main/contract/cloud/index.ts';
import type { Queryable } from '../db/db.ts';
import { defaultPlans, PlanDef } from '../domain/plans.ts';

export async function listPlans(q: Queryable): Promise<PlanDef[]> {
  const r = await q.query(
    'SELECT id, rank, features, products, site_limit, limits, update_channels, support_priority FROM plans ORDER BY rank, id',
  );
  return r.rows.map((row) => PlanDef.parse(row));
}

export async function upsertPlan(q: Queryable, p: PlanDef, now: Date): Promise<void> {
  await q.query(
    `INSERT INTO plans (id, rank, features, products, site_limit, limits, update_channels, updated_at, support_priority)
     VALUES ($1, $2, $3::jsonb, $4::jsonb, $5, $6::jsonb, $7::jsonb, $8, $9)
     ON CONFLICT (id) DO UPDATE SET rank = EXCLUDED.rank, features = EXCLUDED.features, products = EXCLUDED.products,
       site_limit = EXCLUDED.site_limit, limits = EXCLUDED.limits, update_channels = EXCLUDED.update_channels, updated_at = EXCLUDED.updated_at,
       support_priority = EXCLUDED.support_priority`,
    [
      p.id,
      p.rank,
      JSON.stringify(p.features),
      JSON.stringify(p.products),
      p.site_limit,
      JSON.stringify(p.limits),
      JSON.stringify(p.update_channels),
      now,
      p.support_priority,
    ],
  );
}

/** Seeds the default plans into an empty plans table (a second instance doing the same at once changes nothing). */
export async function seedPlans(q: Queryable, now: Date): Promise<void> {
  for (const p of defaultPlans()) {
    await q.query(
      `INSERT INTO plans (id, rank, features, products, site_limit, limits, update_channels, updated_at, support_priority)
       SELECT $1, $2, $3::jsonb, $4::jsonb, $5, $6::jsonb, $7::jsonb, $8, $9
        WHERE NOT EXISTS (SELECT 1 FROM cloud_settings WHERE key = 'plans_seeded')
       ON CONFLICT (id) DO NOTHING`,
      [
        p.id,
        p.rank,
        JSON.stringify(p.features),
        JSON.stringify(p.products),
        p.site_limit,
        JSON.stringify(p.limits),
        JSON.stringify(p.update_channels),
        now,
        p.support_priority,
      ],
    );
  }
  await q.query(`INSERT INTO cloud_settings (key, value) VALUES ('plans_seeded', '1') ON CONFLICT (key) DO NOTHING`);
}

export async function setProductSwitch(
  q: Queryable,
  scope: 'account' | 'site',
  subject: string,
  product: CloudProduct,
  enabled: boolean,
  now: Date,
): Promise<void> {
  await q.query(
    `INSERT INTO product_switches (scope, subject, product, enabled, updated_at) VALUES ($1, $2, $3, $4, $5)
     ON CONFLICT (scope, subject, product) DO UPDATE SET enabled = EXCLUDED.enabled, updated_at = EXCLUDED.updated_at`,
    [scope, subject, product, enabled, now],
  );
}

/** Products switched off for the site or its account. */
export async function switchedOff(q: Queryable, siteId: string, accountId: string | null): Promise<Set<CloudProduct>> {
  const r = await q.query<{ product: CloudProduct }>(
    `SELECT DISTINCT product FROM product_switches WHERE enabled = false AND ((scope = 'site' AND subject = $1) OR (scope = 'account' AND subject = $2))`,
    [siteId, accountId ?? ''],
  );
  return new Set(r.rows.map((x) => x.product));
}

export async function listProductSwitches(
  q: Queryable,
): Promise<Array<{ scope: string; subject: string; product: string; enabled: boolean; updated_at: string }>> {
  return (
    await q.query<{ scope: string; subject: string; product: string; enabled: boolean; updated_at: string }>(
      'SELECT scope, subject, product, enabled, updated_at FROM product_switches ORDER BY scope, subject, product',
    )
  ).rows;
}
