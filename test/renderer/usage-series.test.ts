import { describe, expect, it } from 'vitest';
import { buildSeries, niceMax, parseHourKey, toolRows } from '../../renderer/screens/usage/series.ts';

const NOW = Date.parse('2026-11-22T10:30:00Z');

describe('usage series', () => {
  it('puts hourly counts into the last 24 one-hour buckets, ending with the current hour', () => {
    const s = buildSeries(
      {
        '2026-11-22T10': { ok: 2 },
        '2026-11-22T09': { ok: 1, error: 1 },
        '2026-11-21T10': { ok: 50 },
        garbage: { ok: 9 },
      },
      '24h',
      NOW,
    );
    expect(s.buckets).toHaveLength(24);
    expect(s.buckets.at(-1)!.start).toBe(Date.parse('2026-11-22T10:00:00Z'));
    expect(s.buckets.at(-1)!.counts).toEqual({ ok: 2 });
    expect(s.buckets.at(-2)!.total).toBe(2);
    expect(s.total).toBe(4); // 24 h ago is outside, garbage keys are ignored
    expect(s.results).toEqual(['ok', 'error']);
    expect(s.max).toBe(2);
  });

  it('groups into 6-hour and daily buckets aligned to UTC', () => {
    const hourly = {
      '2026-11-22T10': { ok: 1 },
      '2026-11-22T06': { ok: 1 },
      '2026-11-22T05': { staged: 1 },
      '2026-10-25T00': { ok: 1 },
    };
    const week = buildSeries(hourly, '7d', NOW);
    expect(week.buckets).toHaveLength(28);
    expect(week.buckets.at(-1)!.start).toBe(Date.parse('2026-11-22T06:00:00Z'));
    expect(week.buckets.at(-1)!.total).toBe(2);
    expect(week.buckets.at(-2)!.counts).toEqual({ staged: 1 });
    const month = buildSeries(hourly, '30d', NOW);
    expect(month.buckets.at(-1)!.total).toBe(3);
    expect(month.total).toBe(4);
  });

  it('reads hour keys strictly and rounds axis maxima', () => {
    expect(parseHourKey('2026-11-22T07')).toBe(Date.parse('2026-11-22T07:00:00Z'));
    expect(parseHourKey('2026-11-22')).toBeNaN();
    expect([0, 1, 3, 7, 12, 99, 101].map(niceMax)).toEqual([1, 1, 5, 10, 20, 100, 200]);
  });

  it('lists tools busiest first, without idle ones', () => {
    expect(toolRows({ a: { ok: 1 }, b: { ok: 2, error: 1 }, c: { ok: 0 } }).map((r) => [r.tool, r.total])).toEqual([
      ['b', 3],
      ['a', 1],
    ]);
  });
});
