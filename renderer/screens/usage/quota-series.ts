import type { CloudUsageView } from '../../../main/contract/index.ts';
import type { LimitState } from '../../../main/contract/cloud/usage.ts';
import { QUOTA_NEAR_SHARE } from '../../../main/contract/index.ts';
import type { Bucket, Series } from './series.ts';

const DAY = 86_400_000;
/** The suite's products in a fixed order, so each keeps its colour; unknown ones come after. */
const PRODUCT_ORDER = ['mcp', 'verto', 'aeo', 'code', 'pro'];

/** The metrics the gateway reported any daily history for, in a stable order. */
export function historyMetrics(history: CloudUsageView['history']): string[] {
  return [...new Set(history.map((h) => h.metric))].sort();
}

/**
 * usage/history's daily rows for one metric as the chart's series: one bucket
 * per UTC day for the last `days` days (today last), stacked by product.
 * Rows outside the window or with an unreadable date are left out.
 */
export function cloudSeries(history: CloudUsageView['history'], metric: string, days: number, now: number): Series {
  const today = Math.floor(now / DAY) * DAY;
  const first = today - (days - 1) * DAY;
  const buckets: Bucket[] = Array.from({ length: days }, (_, i) => ({ start: first + i * DAY, counts: {}, total: 0 }));
  const seen = new Set<string>();
  for (const row of history) {
    if (row.metric !== metric || row.amount <= 0) continue;
    const t = Date.parse(row.period_start);
    if (Number.isNaN(t)) continue;
    const day = Math.floor(t / DAY) * DAY;
    if (day < first || day > today) continue;
    const bucket = buckets[(day - first) / DAY]!;
    bucket.counts[row.product] = (bucket.counts[row.product] ?? 0) + row.amount;
    bucket.total += row.amount;
    seen.add(row.product);
  }
  const results = [
    ...PRODUCT_ORDER.filter((p) => seen.has(p)),
    ...[...seen].filter((p) => !PRODUCT_ORDER.includes(p)).sort(),
  ];
  return {
    buckets,
    results,
    max: Math.max(0, ...buckets.map((b) => b.total)),
    total: buckets.reduce((s, b) => s + b.total, 0),
  };
}

export type QuotaLevel = 'ok' | 'near' | 'exceeded' | 'none';

/** How full a limit is: `none` when the plan does not include the metric at all (a limit of 0). */
export function quotaLevel(l: Pick<LimitState, 'limit' | 'used'>): QuotaLevel {
  if (l.limit <= 0) return 'none';
  if (l.used >= l.limit) return 'exceeded';
  return l.used >= l.limit * QUOTA_NEAR_SHARE ? 'near' : 'ok';
}

/** The share used, 0..100, for the bar (an overdrawn limit shows full). */
export const usedPercent = (l: Pick<LimitState, 'limit' | 'used'>): number =>
  l.limit <= 0 ? 0 : Math.min(100, Math.round((l.used / l.limit) * 100));

/** The most urgent limits first, then by metric. */
export function sortLimits(limits: readonly LimitState[]): LimitState[] {
  const rank: Record<QuotaLevel, number> = { exceeded: 0, near: 1, ok: 2, none: 3 };
  return [...limits].sort(
    (a, b) =>
      rank[quotaLevel(a)] - rank[quotaLevel(b)] ||
      a.metric.localeCompare(b.metric) ||
      a.scope.localeCompare(b.scope) ||
      a.period.localeCompare(b.period),
  );
}
