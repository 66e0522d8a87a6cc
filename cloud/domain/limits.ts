import type { Metric, Period, Scope } from '../../main/contract/cloud/index.ts';
import type { PlanLimit } from './plans.ts';
import type { Subject } from './usage-rules.ts';

/** A limit that applies to a site, before its use is known. */
export interface EffectiveLimit extends Subject {
  metric: Metric;
  period: Period;
  limit: number;
  source: 'plan' | 'operator';
}

export interface OperatorLimit {
  scope: Scope;
  subject: string;
  metric: Metric;
  period: Period;
  limit: number;
}

/**
 * The plan's limits apply per site; the operator's limits apply to their
 * scope, and an operator limit on the site replaces the plan's for the same
 * metric and period.
 */
export function effectiveLimits(siteId: string, planLimits: readonly PlanLimit[], operator: readonly OperatorLimit[], subjects: readonly Subject[]): EffectiveLimit[] {
  const mine = operator.filter((o) => subjects.some((s) => s.scope === o.scope && s.subject === o.subject));
  const out: EffectiveLimit[] = mine.map((o) => ({ ...o, source: 'operator' as const }));
  for (const p of planLimits) {
    if (mine.some((o) => o.scope === 'site' && o.metric === p.metric && o.period === p.period)) continue;
    out.push({ scope: 'site', subject: siteId, metric: p.metric, period: p.period, limit: p.limit, source: 'plan' });
  }
  const order: Record<Scope, number> = { site: 0, project: 1, department: 2, account: 3 };
  return out.sort((a, b) => order[a.scope] - order[b.scope] || a.metric.localeCompare(b.metric) || a.period.localeCompare(b.period));
}
