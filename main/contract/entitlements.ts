import { z } from 'zod';
import { lazySchema } from './lazy-schema.ts';

export const Plan = lazySchema(() => z.enum(['free', 'pro', 'agency', 'enterprise']));
export type Plan = z.infer<typeof Plan>;
export const PLAN_ORDER: readonly Plan[] = Plan.options;

export const Product = lazySchema(() => z.enum(['aeo', 'code', 'verto', 'mcp', 'pro']));
export type Product = z.infer<typeof Product>;

/** Seed: `{feature, allowed, plan, expires_at}`. */
export const Entitlement = lazySchema(() =>
  z.object({
    feature: z.string(),
    allowed: z.boolean(),
    plan: z.string(),
    expires_at: z.string().nullable(),
  }),
);
export type Entitlement = z.infer<typeof Entitlement>;

/**
 * The local policy used until the cloud client provides entitlements: which
 * plan first includes each feature. A feature absent here needs `pro`.
 */
export const FEATURE_PLANS: Record<string, Plan> = {
  'mcp.core': 'free',
  'mcp.staging': 'free',
  'site.pages.read': 'free',
  'site.pages.write': 'free',
  'seo.analyze': 'free',
  'seo.keywords': 'free',
  // the desk in front of a person's own MCP servers is the product (docs/decisions.md); pro keeps what costs money to run
  'mcp.upstreams': 'free',
  'verto.translate': 'pro',
  'agency.sites': 'agency',
  'enterprise.controls': 'enterprise',
};
