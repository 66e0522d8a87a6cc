import { z } from 'zod';
import {
  CloudProduct,
  DEFAULT_PLAN_FEATURES,
  DEFAULT_PLAN_ORDER,
  Metric,
  Period,
} from '../../main/contract/cloud/index.ts';

/** A plan as stored: the features and products it includes, its site limit, per-site limits and update channels. */
export const PlanLimit = z.object({ metric: Metric, period: Period, limit: z.number().int().nonnegative() });
export type PlanLimit = z.infer<typeof PlanLimit>;
export const PlanDef = z.object({
  id: z.string(),
  rank: z.number().int(),
  features: z.array(z.string()),
  products: z.array(CloudProduct),
  site_limit: z.number().int().nonnegative(),
  limits: z.array(PlanLimit),
  update_channels: z.array(z.string()),
  /** named in every answer to the plan's sites (`p1` first); an account's policy may override it */
  support_priority: z.string().nullable().default(null),
});
export type PlanDef = z.infer<typeof PlanDef>;

const ALL_PRODUCTS = CloudProduct.options;
const L = (metric: Metric, period: Period, limit: number): PlanLimit => ({ metric, period, limit });

/** The plans a new gateway starts with; each includes the features of the plans before it. */
export function defaultPlans(): PlanDef[] {
  const cumulative: string[] = [];
  const spec: Record<(typeof DEFAULT_PLAN_ORDER)[number], Omit<PlanDef, 'id' | 'rank' | 'features'>> = {
    free: {
      products: ['mcp', 'aeo'],
      site_limit: 1,
      limits: [L('mcp_actions', 'day', 500), L('indexing_requests', 'month', 100), L('reports', 'month', 5)],
      update_channels: ['stable'],
      support_priority: 'p4',
    },
    pro: {
      products: ALL_PRODUCTS,
      site_limit: 3,
      limits: [
        L('ai_tokens', 'month', 2_000_000),
        L('translation_characters', 'month', 500_000),
        L('mcp_actions', 'day', 10_000),
        L('indexing_requests', 'month', 5_000),
        L('reports', 'month', 100),
        L('cloud_tasks', 'month', 500),
      ],
      update_channels: ['stable', 'beta'],
      support_priority: 'p3',
    },
    agency: {
      products: ALL_PRODUCTS,
      site_limit: 50,
      limits: [
        L('ai_tokens', 'month', 10_000_000),
        L('translation_characters', 'month', 2_500_000),
        L('mcp_actions', 'day', 50_000),
        L('indexing_requests', 'month', 25_000),
        L('reports', 'month', 500),
        L('cloud_tasks', 'month', 2_500),
      ],
      update_channels: ['stable', 'beta'],
      support_priority: 'p2',
    },
    enterprise: {
      products: ALL_PRODUCTS,
      site_limit: 1000,
      limits: [],
      update_channels: ['stable', 'beta'],
      support_priority: 'p1',
    },
  };
  return DEFAULT_PLAN_ORDER.map((id, rank) => {
    cumulative.push(...DEFAULT_PLAN_FEATURES[id]);
    return { id, rank: rank * 10, features: [...cumulative], ...spec[id] };
  });
}

/** The lowest-ranked plan that includes `feature`, or null when none does. */
export function requiredPlan(plans: readonly PlanDef[], feature: string): string | null {
  let best: PlanDef | null = null;
  for (const p of plans) if (p.features.includes(feature) && (!best || p.rank < best.rank)) best = p;
  return best?.id ?? null;
}
