import {
  CLOUD_PRODUCTS,
  FEATURE_CATALOG,
  type CloudEntitlement,
  type CloudProduct,
  type LicenseStatus,
  type ProductStates,
} from '../../main/contract/cloud/index.ts';
import type { PlanDef } from './plans.ts';

/**
 * What a site may do, from its license, its plan and the product switches:
 * pure, so the answers of entitlements, entitlements/check and the
 * certificate are one computation.
 */
export interface LicenseFacts {
  status: 'active' | 'revoked';
  plan_id: string;
  expires_at: string | null;
}

export function licenseStatus(license: LicenseFacts | null, now: Date): LicenseStatus {
  if (!license || license.status === 'revoked') return 'invalid';
  if (license.expires_at !== null && Date.parse(license.expires_at) <= now.getTime()) return 'expired';
  return 'active';
}

/** Product states: in the plan and not switched off for the account or the site. */
export function productStates(plan: PlanDef | null, switchedOff: ReadonlySet<CloudProduct>): ProductStates {
  const out = {} as ProductStates;
  for (const p of CLOUD_PRODUCTS)
    out[p] = plan && plan.products.includes(p) && !switchedOff.has(p) ? 'active' : 'inactive';
  return out;
}

export interface Grants {
  status: LicenseStatus;
  products: ProductStates;
  entitlements: CloudEntitlement[];
}

const NONE: ReadonlySet<string> = new Set();

/** `featuresOff`: features the site's account switched off for all its sites (enterprise policy). */
export function computeGrants(
  license: LicenseFacts | null,
  plan: PlanDef | null,
  switchedOff: ReadonlySet<CloudProduct>,
  now: Date,
  featuresOff: ReadonlySet<string> = NONE,
): Grants {
  const status = licenseStatus(license, now);
  const products = productStates(status === 'active' ? plan : null, switchedOff);
  const entitlements = FEATURE_CATALOG.map((f) => ({
    feature: f.key,
    allowed:
      status === 'active' &&
      !!plan &&
      plan.features.includes(f.key) &&
      products[f.product] === 'active' &&
      !featuresOff.has(f.key),
    plan: plan?.id ?? 'none',
    expires_at: license?.expires_at ?? null,
  }));
  return { status, products, entitlements };
}

export type CheckOutcome =
  | { ok: true; entitlement: CloudEntitlement }
  | {
      ok: false;
      code: 'license_invalid' | 'license_expired' | 'product_inactive' | 'entitlement_required';
      product?: CloudProduct;
      required_plan?: string | null;
      switched_off?: true;
    };

/** The order of refusals: no valid license, then the product, then the account's feature switches, then the plan. */
export async function checkFeature(
  feature: string,
  grants: Grants,
  plan: PlanDef | null,
  requiredPlanOf: () => Promise<string | null>,
  switchedOff: ReadonlySet<CloudProduct>,
  featuresOff: ReadonlySet<string> = NONE,
): Promise<CheckOutcome> {
  const def = FEATURE_CATALOG.find((f) => f.key === feature)!;
  if (grants.status === 'invalid') return { ok: false, code: 'license_invalid' };
  if (grants.status === 'expired') return { ok: false, code: 'license_expired' };
  if (plan && plan.products.includes(def.product) && switchedOff.has(def.product))
    return { ok: false, code: 'product_inactive', product: def.product };
  // No plan change lifts an account's own switch: no required_plan.
  if (featuresOff.has(feature))
    return { ok: false, code: 'entitlement_required', product: def.product, required_plan: null, switched_off: true };
  const e = grants.entitlements.find((x) => x.feature === feature)!;
  // Only a refusal needs the other plans: the lookup is a function so an allowed check reads nothing more.
  if (!e.allowed)
    return { ok: false, code: 'entitlement_required', product: def.product, required_plan: await requiredPlanOf() };
  return { ok: true, entitlement: e };
}
