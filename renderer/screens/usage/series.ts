import { AuditResult } from '../../../main/contract/index.ts';
import type { Stats } from '../../../main/contract/index.ts';

export type Range = '24h' | '7d' | '30d';
export const RANGES: Record<Range, { label: string; bucketHours: number; buckets: number }> = {
  '24h': { label: 'Last 24 hours', bucketHours: 1, buckets: 24 },
  '7d': { label: 'Last 7 days', bucketHours: 6, buckets: 28 },
  '30d': { label: 'Last 30 days', bucketHours: 24, buckets: 30 },
};

export interface Bucket {
  /** start of the bucket, ms since the epoch (UTC hour boundary) */
  start: number;
  counts: Record<string, number>;
  total: number;
}

export interface Series {
  buckets: Bucket[];
  /** results that occur in the range, in the contract's order (unknown ones last) */
  results: string[];
  max: number;
  total: number;
}

const HOUR = 3_600_000;

/** "2026-11-22T07" -> ms; NaN for anything else. */
export function parseHourKey(key: string): number {
  return /^\d{4}-\d{2}-\d{2}T\d{2}$/.test(key) ? Date.parse(`${key}:00:00Z`) : NaN;
}

/** Group Stats.hourly (UTC hour buckets per result) into the range's buckets, ending with the current hour. */
export function buildSeries(hourly: Stats['hourly'], range: Range, now: number): Series {
  const { bucketHours, buckets: count } = RANGES[range];
  const size = bucketHours * HOUR;
  const currentHour = Math.floor(now / HOUR) * HOUR;
  // Align buckets to whole multiples of their size (UTC), the last one holding the current hour.
  const lastStart = Math.floor(currentHour / size) * size;
  const firstStart = lastStart - (count - 1) * size;
  const buckets: Bucket[] = Array.from({ length: count }, (_, i) => ({
    start: firstStart + i * size,
    counts: {},
    total: 0,
  }));
  const seen = new Set<string>();
  for (const [key, byResult] of Object.entries(hourly)) {
    const t = parseHourKey(key);
    if (Number.isNaN(t) || t < firstStart || t >= lastStart + size) continue;
    const bucket = buckets[Math.floor((t - firstStart) / size)]!;
    for (const [result, n] of Object.entries(byResult)) {
      if (!n) continue;
      bucket.counts[result] = (bucket.counts[result] ?? 0) + n;
      bucket.total += n;
      seen.add(result);
    }
  }
  const known: string[] = AuditResult.options.filter((r) => seen.has(r));
  const results = [...known, ...[...seen].filter((r) => !known.includes(r)).sort()];
  const max = Math.max(0, ...buckets.map((b) => b.total));
  return { buckets, results, max, total: buckets.reduce((s, b) => s + b.total, 0) };
}

/** A round upper bound for the y axis: 1, 2, 5, 10, 20, 50... */
export function niceMax(n: number): number {
  if (n <= 1) return 1;
  const p = 10 ** Math.floor(Math.log10(n));
  for (const m of [1, 2, 5, 10]) if (m * p >= n) return m * p;
  return 10 * p;
}

export interface ToolRow {
  tool: string;
  total: number;
  counts: Record<string, number>;
}

/** Stats.tools as rows, busiest first. */
export function toolRows(tools: Stats['tools']): ToolRow[] {
  return Object.entries(tools)
    .map(([tool, counts]) => ({ tool, counts, total: Object.values(counts).reduce((s, n) => s + n, 0) }))
    .filter((r) => r.total > 0)
    .sort((a, b) => b.total - a.total || a.tool.localeCompare(b.tool));
}
