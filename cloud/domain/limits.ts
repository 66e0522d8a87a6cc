import type { Metric, Period, Scope } from '../../main/contract/cloud/index.ts';
import type { PlanLimit } from './plans.ts';
import type { Subject } from './usage-rules.ts';

/** A limit that applies to a site, before its use is known. */
export interface EffectiveLimit extends Subject {
  metric: Metric;
  period: Period;
  limit: number;
  source: 'plan' | SetBy;
}

/** Who set a stored limit: the operator (`limits set`) or the account (enterprise/limits). */
export type SetBy = 'operator' | 'account';

export interface OperatorLimit {
  scope: Scope;
  subject: string;
  metric: Metric;
  period: Period;
  limit: number;
  /** default operator */
  set_by?: SetBy;
}

/**
 * The plan's limits apply per site; stored limits apply to their scope. An
 * operator limit on the site replaces the plan's for the same metric and
 * period (the vendor may grant more); an account's own limit only adds a
 * constraint (an account can budget, never raise what it bought). When
 * several limits hold one counter, each is checked: the tightest decides.
 */
export function effectiveLimits(
  siteId: string,
  planLimits: readonly PlanLimit[],
  stored: readonly OperatorLimit[],
  subjects: readonly Subject[],
): EffectiveLimit[] {
  const mine = stored.filter((o) => subjects.some((s) => s.scope === o.scope && s.subject === o.subject));
  const out: EffectiveLimit[] = mine.map(({ set_by, ...o }) => ({ ...o, source: set_by ?? 'operator' }));
  for (const p of planLimits) {
    if (
      mine.some(
        (o) =>
          (o.set_by ?? 'operator') === 'operator' &&
          o.scope === 'site' &&
          o.metric === p.metric &&
          o.period === p.period,
      )
    )
      continue;
    out.push({ scope: 'site', subject: siteId, metric: p.metric, period: p.period, limit: p.limit, source: 'plan' });
  }
  const order: Record<Scope, number> = { site: 0, project: 1, department: 2, account: 3 };
  return out.sort(
    (a, b) => order[a.scope] - order[b.scope] || a.metric.localeCompare(b.metric) || a.period.localeCompare(b.period),
  );
}
