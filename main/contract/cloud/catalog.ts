import { z } from 'zod';
import { lazySchema } from '../lazy-schema.ts';

/**
 * What the gateway sells: products, plans and the dotted feature keys each
 * plan includes. The operator can change plans (`gatehouse-cloud plans set`);
 * these are the defaults a fresh gateway starts with, in line with the app's
 * local free policy (main/contract/entitlements.ts FEATURE_PLANS).
 */
export const CloudProduct = lazySchema(() => z.enum(['aeo', 'code', 'verto', 'mcp', 'pro']));
export type CloudProduct = z.infer<typeof CloudProduct>;
export const CLOUD_PRODUCTS: readonly CloudProduct[] = CloudProduct.options;

/** A plan id: lower-case, like `free`, `pro`, `agency`, `enterprise` or one the operator adds. */
export const PlanId = lazySchema(() =>
  z.string().regex(/^[a-z][a-z0-9_-]{0,39}$/, 'a plan id: a-z, 0-9, _ or -, up to 40 characters'),
);
/** A dotted feature key like `verto.translate`. */
export const FeatureKey = lazySchema(() =>
  z
    .string()
    .max(100)
    .regex(/^[a-z0-9_]+(\.[a-z0-9_]+)+$/, 'a dotted feature key like verto.translate'),
);

export interface FeatureDef {
  key: string;
  product: CloudProduct;
  title: string;
}

/** Every feature the gateway knows, with the product it belongs to. */
export const FEATURE_CATALOG: readonly FeatureDef[] = [
  { key: 'mcp.core', product: 'mcp', title: 'MCP endpoint and read tools' },
  { key: 'mcp.staging', product: 'mcp', title: 'Staged writes with approval' },
  { key: 'site.pages.read', product: 'mcp', title: 'Read site pages' },
  { key: 'site.pages.write', product: 'mcp', title: 'Edit site pages' },
  { key: 'mcp.upstreams', product: 'mcp', title: 'Remote and local upstream MCP servers' },
  { key: 'seo.analyze', product: 'aeo', title: 'SEO analysis' },
  { key: 'seo.keywords', product: 'aeo', title: 'Keyword research' },
  { key: 'aeo.reports', product: 'aeo', title: 'Answer-engine reports' },
  { key: 'code.assist', product: 'code', title: 'Code assistance' },
  { key: 'verto.translate', product: 'verto', title: 'AI translation' },
  { key: 'ai.generate', product: 'pro', title: 'AI generation through the cloud' },
  { key: 'pro.support', product: 'pro', title: 'Priority support' },
  { key: 'agency.sites', product: 'pro', title: 'Agency multi-site views' },
  { key: 'enterprise.controls', product: 'pro', title: 'Enterprise controls' },
];

/** The default plans: each includes the features of the plans before it. */
export const DEFAULT_PLAN_ORDER = ['free', 'pro', 'agency', 'enterprise'] as const;
export const DEFAULT_PLAN_FEATURES: Record<(typeof DEFAULT_PLAN_ORDER)[number], readonly string[]> = {
  // upstreams are free: the desk in front of a person's own servers is the product; pro is what costs money to run
  free: [
    'mcp.core',
    'mcp.staging',
    'site.pages.read',
    'site.pages.write',
    'mcp.upstreams',
    'seo.analyze',
    'seo.keywords',
  ],
  pro: ['verto.translate', 'aeo.reports', 'code.assist', 'ai.generate'],
  agency: ['agency.sites', 'pro.support'],
  enterprise: ['enterprise.controls'],
};

/** A feature, as `GET features` lists it. */
export const FeatureInfo = lazySchema(() =>
  z.object({
    key: z.string(),
    product: CloudProduct,
    title: z.string(),
    /** the lowest-ranked plan that includes it, or null when none does */
    required_plan: z.string().nullable(),
  }),
);
export type FeatureInfo = z.infer<typeof FeatureInfo>;

export const ProductState = lazySchema(() => z.enum(['active', 'inactive']));
export type ProductState = z.infer<typeof ProductState>;
export const ProductStates = lazySchema(() =>
  z.object({
    aeo: ProductState,
    code: ProductState,
    verto: ProductState,
    mcp: ProductState,
    pro: ProductState,
  }),
);
export type ProductStates = z.infer<typeof ProductStates>;
