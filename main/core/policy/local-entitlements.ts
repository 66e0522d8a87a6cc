import { FEATURE_PLANS, PLAN_ORDER, type Entitlement, type Plan } from '../../contract/entitlements.ts';
import type { EntitlementSource } from '../ports/ports.ts';
import { ownValue } from '../safe-record.ts';

/**
 * The entitlement source until the cloud client replaces it: a real local
 * policy. Features of the current plan (free by default) are allowed; any
 * other feature is refused with the plan that first includes it.
 */
export class LocalEntitlements implements EntitlementSource {
  constructor(private readonly plan: Plan = 'free') {}

  async check(feature: string): Promise<Entitlement> {
    const required = ownValue(FEATURE_PLANS, feature) ?? 'pro';
    const allowed = PLAN_ORDER.indexOf(this.plan) >= PLAN_ORDER.indexOf(required);
    return { feature, allowed, plan: allowed ? this.plan : required, expires_at: null };
  }
}
