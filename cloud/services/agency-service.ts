import type { z } from 'zod';
import {
  FEATURE_CATALOG,
  type AgencyEntitlementsQuery,
  type AgencySite,
  type AgencySitesQuery,
  type AgencyUsageQuery,
  type Period,
} from '../../main/contract/cloud/index.ts';
import { encodeCursor } from '../domain/cursor.ts';
import { computeGrants, licenseStatus } from '../domain/grants.ts';
import { periodReset, periodStart } from '../domain/periods.ts';
import { CloudError } from '../errors.ts';
import { cursorOffset } from '../http/query.ts';
import { accountRollups, accountSiteGrants, accountSites, type AccountSiteRow } from '../repo/agency-repo.ts';
import { policyOf } from '../repo/policies-repo.ts';
import type { AccountPrincipal } from './account-auth.ts';
import type { Ctx } from './context.ts';

/**
 * The agency views: an account's sites, usage roll-ups and entitlement
 * matrix, each read with the account id as the first condition.
 */

export function agencySite(r: AccountSiteRow, now: Date): AgencySite {
  const license = r.l_status ? { status: r.l_status, plan_id: r.l_plan_id!, expires_at: r.l_expires_at } : null;
  return {
    site_id: r.id,
    url: r.url,
    name: r.name,
    environment: r.environment,
    status: r.status,
    license: {
      status: licenseStatus(license, now),
      plan: r.l_plan_id,
      key_preview: r.l_key_preview,
      expires_at: r.l_expires_at,
    },
    department: r.department,
    project: r.project,
    version: r.version,
    products_in_use: r.products_in_use,
    outbox_depth: r.outbox_depth,
    last_sync_at: r.last_sync_at,
    registered_at: r.created_at,
  };
}

export async function agencySites(ctx: Ctx, p: AccountPrincipal, q: z.output<typeof AgencySitesQuery>) {
  const offset = cursorOffset(q.cursor);
  const rows = await accountSites(
    ctx.db,
    p.account.id,
    { status: q.status, environment: q.environment },
    offset,
    q.limit + 1,
  );
  const now = ctx.now();
  return {
    success: true as const,
    account: p.account,
    sites: rows.slice(0, q.limit).map((r) => agencySite(r, now)),
    next_cursor: rows.length > q.limit ? encodeCursor(offset + q.limit) : null,
  };
}

/** The longest range a roll-up (or a report) covers: a year of months, or 92 days. */
const MAX_RANGE_MS: Record<Period, number> = { month: 366 * 86_400_000, day: 92 * 86_400_000 };

export function rollupRange(
  period: Period,
  from: string | undefined,
  to: string | undefined,
  now: Date,
): { from: Date; to: Date } {
  const f = from ? new Date(from) : periodStart(period, now);
  const t = to ? new Date(to) : periodReset(period, now);
  if (f.getTime() >= t.getTime()) throw new CloudError('invalid_request', 'from must be before to');
  if (t.getTime() - f.getTime() > MAX_RANGE_MS[period])
    throw new CloudError(
      'invalid_request',
      `the range is longer than ${period === 'month' ? '366 days' : '92 days'} for period=${period}: narrow it, or use period=month`,
    );
  return { from: f, to: t };
}

export async function agencyUsage(ctx: Ctx, p: AccountPrincipal, q: z.output<typeof AgencyUsageQuery>) {
  const offset = cursorOffset(q.cursor);
  const range = rollupRange(q.period, q.from, q.to, ctx.now());
  const rows = await accountRollups(
    ctx.db,
    p.account.id,
    { period: q.period, ...range, site: q.site, product: q.product, metric: q.metric },
    offset,
    q.limit + 1,
  );
  return {
    success: true as const,
    account: p.account,
    period: q.period,
    from: range.from.toISOString(),
    to: range.to.toISOString(),
    items: rows.slice(0, q.limit),
    next_cursor: rows.length > q.limit ? encodeCursor(offset + q.limit) : null,
  };
}

export async function agencyEntitlements(ctx: Ctx, p: AccountPrincipal, q: z.output<typeof AgencyEntitlementsQuery>) {
  const offset = cursorOffset(q.cursor);
  const now = ctx.now();
  const [rows, policy] = [
    await accountSiteGrants(ctx.db, p.account.id, offset, q.limit + 1),
    await policyOf(ctx.db, p.account.id),
  ];
  const featuresOff = new Set(policy?.features_off ?? []);
  const sites = rows.slice(0, q.limit).map((r) => {
    const g = computeGrants(r.license, r.plan, new Set(r.off), now, featuresOff);
    return {
      site_id: r.id,
      name: r.name,
      status: r.status,
      plan: r.license?.plan_id ?? null,
      license_status: g.status,
      allowed: Object.fromEntries(g.entitlements.map((e) => [e.feature, r.status === 'active' && e.allowed])),
    };
  });
  return {
    success: true as const,
    account: p.account,
    features: FEATURE_CATALOG.map((f) => f.key),
    sites,
    next_cursor: rows.length > q.limit ? encodeCursor(offset + q.limit) : null,
  };
}
