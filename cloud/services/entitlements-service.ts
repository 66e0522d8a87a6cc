import { FEATURE_CATALOG, type CloudEntitlement, type CloudProduct } from '../../main/contract/cloud/index.ts';
import { checkFeature } from '../domain/grants.ts';
import { requiredPlan } from '../domain/plans.ts';
import { listPlans } from '../repo/catalog-repo.ts';
import { CloudError } from '../errors.ts';
import type { SiteRow } from '../repo/sites-repo.ts';
import type { Ctx } from './context.ts';
import { issueCertificate, loadGrants, type SiteGrants } from './grants-service.ts';
import { licenseRefusal } from './licenses-service.ts';

/** entitlements/check: the documented shapes exactly (docs/cloud-gateway.md); every refusal is an error with its code. */
export async function check(ctx: Ctx, site: SiteRow, feature: string) {
  const entitlement = await requireFeature(ctx, await loadGrants(ctx.db, site, ctx.now()), feature);
  return { success: true as const, entitlement };
}

/** The feature's entitlement when the site may use it; else the refusal with its code (license, product, account switch, plan). */
export async function requireFeature(ctx: Ctx, g: SiteGrants, feature: string): Promise<CloudEntitlement> {
  if (!FEATURE_CATALOG.some((f) => f.key === feature))
    throw new CloudError('invalid_request', `unknown feature '${feature}': GET features lists them`);
  const out = await checkFeature(
    feature,
    g.grants,
    g.plan,
    () => listPlans(ctx.db).then((plans) => requiredPlan(plans, feature)),
    g.off,
    g.featuresOff,
  );
  if (out.ok) return out.entitlement;
  if (out.code === 'license_invalid') throw licenseRefusal('invalid', {});
  if (out.code === 'license_expired')
    throw licenseRefusal('expired', { license_expires_at: g.license?.expires_at ?? null });
  if (out.code === 'product_inactive')
    throw new CloudError(
      'product_inactive',
      `the product '${out.product}' is switched off for this site or its account: ask the vendor to enable it`,
      { product: out.product },
    );
  if (out.switched_off)
    throw new CloudError(
      'entitlement_required',
      `'${feature}' is switched off for every site of your account by its policy: your account's administrator can switch it on`,
      { required_plan: null, feature, switched_off: true },
    );
  throw new CloudError(
    'entitlement_required',
    `'${feature}' is not included in the ${g.plan?.id ?? 'current'} plan${out.required_plan ? `: upgrade to ${out.required_plan}` : ''}`,
    { required_plan: out.required_plan ?? null, feature },
  );
}

/** GET entitlements: all of the site's, with the certificate (also when the license is not good: the certificate says so). */
export async function all(ctx: Ctx, site: SiteRow) {
  const g = await loadGrants(ctx.db, site, ctx.now());
  const { certificate } = await issueCertificate(ctx, ctx.db, g);
  return { success: true as const, entitlements: g.grants.entitlements, certificate };
}

export async function products(ctx: Ctx, site: SiteRow) {
  const g = await loadGrants(ctx.db, site, ctx.now());
  const ids = Object.keys(g.grants.products) as CloudProduct[];
  return {
    success: true as const,
    products: ids.map((id) => ({ id, state: g.grants.products[id], in_plan: !!g.plan?.products.includes(id) })),
    states: g.grants.products,
  };
}

export async function features(ctx: Ctx, site: SiteRow) {
  const g = await loadGrants(ctx.db, site, ctx.now());
  const plans = await listPlans(ctx.db);
  return {
    success: true as const,
    plan: g.plan?.id ?? null,
    features: FEATURE_CATALOG.map((f) => ({
      key: f.key,
      product: f.product,
      title: f.title,
      required_plan: requiredPlan(plans, f.key),
    })),
  };
}
