import type { CloudProduct, Metric, Period } from '../../main/contract/cloud/index.ts';
import type { Queryable } from '../db/db.ts';
import { PlanDef } from '../domain/plans.ts';
import type { SiteRow } from './sites-repo.ts';

/**
 * Reads across all the sites of one account, each query bounded by the
 * account id first (`sites.account_id`), so one account's view can never
 * reach another's rows.
 */
export type AccountSiteRow = Pick<
  SiteRow,
  | 'id'
  | 'url'
  | 'name'
  | 'environment'
  | 'status'
  | 'department'
  | 'project'
  | 'version'
  | 'products_in_use'
  | 'outbox_depth'
  | 'last_sync_at'
  | 'created_at'
> & {
  l_status: 'active' | 'revoked' | null;
  l_plan_id: string | null;
  l_key_preview: string | null;
  l_expires_at: string | null;
};

export async function accountSites(
  q: Queryable,
  accountId: string,
  f: { status?: string; environment?: string },
  offset: number,
  limit: number,
): Promise<AccountSiteRow[]> {
  const r = await q.query<AccountSiteRow>(
    `SELECT s.id, s.url, s.name, s.environment, s.status, s.department, s.project, s.version, s.products_in_use, s.outbox_depth, s.last_sync_at, s.created_at,
            l.status AS l_status, l.plan_id AS l_plan_id, l.key_preview AS l_key_preview, l.expires_at AS l_expires_at
       FROM sites s LEFT JOIN licenses l ON l.id = s.license_id
      WHERE s.account_id = $1 AND ($2::text IS NULL OR s.status = $2) AND ($3::text IS NULL OR s.environment = $3)
      ORDER BY s.created_at, s.id LIMIT $4 OFFSET $5`,
    [accountId, f.status ?? null, f.environment ?? null, limit, offset],
  );
  return r.rows;
}

export interface SiteGrantRow {
  id: string;
  name: string | null;
  status: string;
  license: { status: 'active' | 'revoked'; plan_id: string; expires_at: string | null } | null;
  plan: PlanDef | null;
  off: CloudProduct[];
}

/** Each site's license, plan and switched-off products, for the entitlement matrix. */
export async function accountSiteGrants(
  q: Queryable,
  accountId: string,
  offset: number,
  limit: number,
): Promise<SiteGrantRow[]> {
  const r = await q.query<{
    id: string;
    name: string | null;
    status: string;
    license: SiteGrantRow['license'];
    plan: unknown;
    off: CloudProduct[];
  }>(
    `SELECT s.id, s.name, s.status,
            CASE WHEN l.id IS NULL THEN NULL ELSE jsonb_build_object('status', l.status, 'plan_id', l.plan_id, 'expires_at', l.expires_at) END AS license,
            CASE WHEN p.id IS NULL THEN NULL ELSE jsonb_build_object('id', p.id, 'rank', p.rank, 'features', p.features, 'products', p.products, 'site_limit', p.site_limit,
                                                                       'limits', p.limits, 'update_channels', p.update_channels, 'support_priority', p.support_priority) END AS plan,
            ARRAY(SELECT ps.product FROM product_switches ps WHERE ps.enabled = false
                   AND ((ps.scope = 'site' AND ps.subject = s.id) OR (ps.scope = 'account' AND ps.subject = s.account_id))) AS off
       FROM sites s LEFT JOIN licenses l ON l.id = s.license_id LEFT JOIN plans p ON p.id = l.plan_id
      WHERE s.account_id = $1
      ORDER BY s.created_at, s.id LIMIT $2 OFFSET $3`,
    [accountId, limit, offset],
  );
  return r.rows.map((row) => ({ ...row, plan: row.plan ? PlanDef.parse(row.plan) : null }));
}

export interface RollupFilter {
  period: Period;
  from: Date;
  to: Date;
  site?: string;
  product?: string;
  metric?: Metric;
}

export interface RollupRow {
  site_id: string;
  product: string;
  metric: Metric;
  period_start: string;
  amount: number;
  events: number;
}

/**
 * Usage per site x product x metric x period of the account's sites in
 * [from, to), from the events (each counted in the period of its own
 * timestamp). The events are summed per site, product, units metric and
 * period first, and only those few groups are split into their metrics
 * (units, tokens): hash aggregation over the events instead of sorting them.
 * `events` counts the events that added to the metric.
 */
export async function accountRollups(
  q: Queryable,
  accountId: string,
  f: RollupFilter,
  offset: number,
  limit: number | null,
): Promise<RollupRow[]> {
  const r = await q.query<RollupRow>(
    `WITH g AS (
       SELECT e.site_id, e.product, e.units_metric, date_trunc($2, e.occurred_at AT TIME ZONE 'UTC') AT TIME ZONE 'UTC' AS period_start,
              sum(e.units) AS units, count(*) FILTER (WHERE e.units > 0) AS units_events,
              sum(e.tokens_input + e.tokens_output) AS tokens, count(*) FILTER (WHERE e.tokens_input + e.tokens_output > 0) AS token_events
         FROM usage_events e
        WHERE e.site_id IN (SELECT id FROM sites WHERE account_id = $1)
          AND e.occurred_at >= $3 AND e.occurred_at < $4
          AND ($5::text IS NULL OR e.site_id = $5) AND ($6::text IS NULL OR e.product = $6)
        GROUP BY 1, 2, 3, 4)
     SELECT g.site_id, g.product, m.metric, g.period_start, sum(m.amount)::bigint AS amount, sum(m.events)::int AS events
       FROM g CROSS JOIN LATERAL (VALUES (g.units_metric, g.units, g.units_events), ('ai_tokens', g.tokens, g.token_events)) AS m(metric, amount, events)
      WHERE m.metric IS NOT NULL AND m.amount > 0 AND ($7::text IS NULL OR m.metric = $7)
      GROUP BY 1, 2, 3, 4
      ORDER BY 4 DESC, 1, 2, 3
      ${limit === null ? '' : 'LIMIT $8 OFFSET $9'}`,
    [
      accountId,
      f.period,
      f.from,
      f.to,
      f.site ?? null,
      f.product ?? null,
      f.metric ?? null,
      ...(limit === null ? [] : [limit, offset]),
    ],
  );
  return r.rows;
}
