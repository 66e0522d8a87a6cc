import { z } from 'zod';
import { Certificate, CloudEntitlement } from './certificate.ts';
import { CloudProduct, FeatureInfo, FeatureKey, ProductStates } from './catalog.ts';
import { lazySchema } from '../lazy-schema.ts';

/** POST entitlements/check */
export const CheckBody = lazySchema(() => z.strictObject({ feature: FeatureKey }));
/** The success shape (docs/cloud-gateway.md, "Endpoints"). Refusals are errors: entitlement_required (with required_plan), product_inactive, license_expired, license_invalid. */
export const CheckAnswer = lazySchema(() => z.object({ success: z.literal(true), entitlement: CloudEntitlement }));
export type CheckAnswer = z.infer<typeof CheckAnswer>;

/** GET entitlements: all of the site's, with the signed certificate. */
export const EntitlementsAnswer = lazySchema(() =>
  z.object({
    success: z.literal(true),
    entitlements: z.array(CloudEntitlement),
    certificate: Certificate,
  }),
);

/** GET products */
export const ProductsAnswer = lazySchema(() =>
  z.object({
    success: z.literal(true),
    products: z.array(z.object({ id: CloudProduct, state: z.enum(['active', 'inactive']), in_plan: z.boolean() })),
    states: ProductStates,
  }),
);

/** GET features */
export const FeaturesAnswer = lazySchema(() =>
  z.object({
    success: z.literal(true),
    features: z.array(FeatureInfo),
    plan: z.string().nullable(),
  }),
);
