import {
  CERTIFICATE_TTL_SECONDS,
  type Certificate,
  type CloudProduct,
  type LicenseView,
} from '../../main/contract/cloud/index.ts';
import type { Queryable } from '../db/db.ts';
import { computeGrants, type Grants } from '../domain/grants.ts';
import type { PlanDef } from '../domain/plans.ts';
import { effectiveLimits, type EffectiveLimit } from '../domain/limits.ts';
import { subjectsOf } from '../domain/usage-rules.ts';
import { stagingPlanLimits } from '../domain/staging.ts';
import { listPlans, switchedOff } from '../repo/catalog-repo.ts';
import { limitsFor } from '../repo/limits-repo.ts';
import { policyOf } from '../repo/policies-repo.ts';
import { licenseById, type LicenseRow } from '../repo/licenses-repo.ts';
import { seatsUsed, type SiteRow } from '../repo/sites-repo.ts';
import type { Ctx } from './context.ts';
import type { ConfigCache } from './config-cache.ts';

/** Everything the gateway knows about what a site may do, read in one place. */
export interface SiteGrants {
  site: SiteRow;
  license: LicenseRow | null;
  plan: PlanDef | null;
  off: Set<CloudProduct>;
  /** features the account switched off for all its sites */
  featuresOff: Set<string>;
  /** the account's override of the plan's support priority */
  accountPriority: string | null;
  grants: Grants;
}

/** The site's grants: from the snapshot the auth query read with it, else read now. */
export async function loadGrants(q: Queryable, site: SiteRow, now: Date): Promise<SiteGrants> {
  if (site.snapshot) {
    const { license, plan, off, featuresOff, accountPriority } = site.snapshot;
    return {
      site,
      license,
      plan,
      off,
      featuresOff,
      accountPriority,
      grants: computeGrants(license, plan, off, now, featuresOff),
    };
  }
  // One after another: a transaction's queries share one connection.
  const license = site.license_id ? await licenseById(q, site.license_id) : null;
  const plan = license ? ((await listPlans(q)).find((p) => p.id === license.plan_id) ?? null) : null;
  const off = await switchedOff(q, site.id, site.account_id);
  const policy = site.account_id ? await policyOf(q, site.account_id) : null;
  const featuresOff = new Set(policy?.features_off ?? []);
  return {
    site,
    license,
    plan,
    off,
    featuresOff,
    accountPriority: policy?.support_priority ?? null,
    grants: computeGrants(license, plan, off, now, featuresOff),
  };
}

/** Plan and support priority, named in every answer to the site (the account's priority wins over the plan's). */
export function supportOf(g: Pick<SiteGrants, 'plan' | 'accountPriority' | 'grants'>): {
  plan: string | null;
  support_priority: string | null;
} {
  const plan = g.grants.status === 'active' ? (g.plan?.id ?? null) : null;
  return { plan, support_priority: g.accountPriority ?? (plan ? (g.plan?.support_priority ?? null) : null) };
}

/** The limits of the site's plan and the stored limits on its scopes (kept per instance while the limits' version holds). */
export async function siteLimits(
  q: Queryable,
  g: Pick<SiteGrants, 'site' | 'plan'>,
  cache?: ConfigCache,
): Promise<EffectiveLimit[]> {
  const subjects = subjectsOf({
    site_id: g.site.id,
    account_id: g.site.account_id,
    department: g.site.department,
    project: g.site.project,
  });
  const key = `limits|${subjects.map((s) => `${s.scope}:${s.subject}`).join('|')}`;
  const stored = cache
    ? await cache.get(key, g.site.snapshot?.config.limits, () => limitsFor(q, subjects))
    : await limitsFor(q, subjects);
  const planLimits = g.plan?.limits ?? [];
  return effectiveLimits(
    g.site.id,
    g.site.environment === 'staging' ? stagingPlanLimits(planLimits) : planLimits,
    stored,
    subjects,
  );
}

export async function licenseView(q: Queryable, g: SiteGrants): Promise<LicenseView> {
  const l = g.license;
  return {
    status: g.grants.status,
    plan: l?.plan_id ?? null,
    key_preview: l?.key_preview ?? null,
    license_expires_at: l?.expires_at ?? null,
    sites_used: l ? await seatsUsed(q, l.id) : null,
    site_limit: l ? (l.site_limit ?? g.plan?.site_limit ?? null) : null,
  };
}

/**
 * When a certificate of the site is issued: now, or just after its previous
 * one when that is later (another instance's clock ahead of ours, or ours
 * stepped back). The app takes a certificate only if it is no older than the
 * one it holds, so their order must not depend on which instance answered.
 */
async function issueTime(q: Queryable, siteId: string, now: Date): Promise<Date> {
  const r = await q.query<{ at: string }>(
    `UPDATE sites SET cert_issued_at = GREATEST($2::timestamptz, cert_issued_at + interval '1 millisecond') WHERE id = $1 RETURNING cert_issued_at AS at`,
    [siteId, now.toISOString()],
  );
  return r.rows[0] ? new Date(r.rows[0].at) : now;
}

/** The signed certificate (docs/cloud-gateway.md "Certificates and keys") for the site's current grants. */
export async function issueCertificate(
  ctx: Ctx,
  q: Queryable,
  g: SiteGrants,
): Promise<{ certificate: Certificate; cert_expires_at: string }> {
  const limits = await siteLimits(q, g, ctx.cache);
  const channel = g.plan?.update_channels[0] ?? 'stable';
  const now = await issueTime(q, g.site.id, ctx.now());
  const certExpires = new Date(now.getTime() + CERTIFICATE_TTL_SECONDS * 1000).toISOString();
  const certificate = await ctx.keys.certify({
    site_id: g.site.id,
    license: {
      status: g.grants.status,
      plan: g.license?.plan_id ?? null,
      key_preview: g.license?.key_preview ?? null,
      expires_at: g.license?.expires_at ?? null,
    },
    entitlements: g.grants.entitlements,
    products: g.grants.products,
    limits: limits.map((l) => ({ scope: l.scope, metric: l.metric, period: l.period, limit: l.limit })),
    update: { channel, eligible: g.grants.status === 'active' },
    issued_at: now.toISOString(),
    cert_expires_at: certExpires,
  });
  return { certificate, cert_expires_at: certExpires };
}
