import type { PlanLimit } from './plans.ts';

/**
 * Staging sites: a site declares itself `staging` when it registers, so the
 * declaration alone must not be worth anything. A staging site takes no
 * production seat, but a license takes at most `stagingCap` of them, and
 * each gets a share of the plan's per-site limits (its own counters, on its
 * own site scope), never the production site's full plan for free. An
 * operator limit set on the staging site itself still replaces the share.
 */

/** Percent of each of the plan's per-site limits a staging site gets (rounded up, so a limit of 5 leaves 1). */
export const STAGING_QUOTA_PERCENT = 10;

/** Staging sites a license takes: its `staging_limit` when the operator set one, else one per production seat. */
export function stagingCap(
  license: { staging_limit?: number | null; site_limit: number | null },
  planSiteLimit: number | undefined,
): number {
  return license.staging_limit ?? license.site_limit ?? planSiteLimit ?? 0;
}

export function stagingPlanLimits(limits: readonly PlanLimit[]): PlanLimit[] {
  return limits.map((l) => ({ ...l, limit: Math.ceil((l.limit * STAGING_QUOTA_PERCENT) / 100) }));
}
