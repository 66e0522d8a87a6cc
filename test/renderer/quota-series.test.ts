import { describe, expect, it } from 'vitest';
import {
  cloudSeries,
  historyMetrics,
  quotaLevel,
  sortLimits,
  usedPercent,
} from '../../renderer/screens/usage/quota-series.ts';
import type { LimitState } from '../../main/contract/cloud/usage.ts';

const NOW = Date.parse('2026-11-22T10:30:00Z');
const row = (day: string, metric: LimitState['metric'], product: string, amount: number) => ({
  period_start: `${day}T00:00:00.000Z`,
  metric,
  product,
  feature: 'f',
  amount,
  events: 1,
});
const limit = (over: Partial<LimitState>): LimitState => ({
  scope: 'site',
  subject: 's',
  metric: 'mcp_actions',
  period: 'month',
  limit: 100,
  used: 0,
  reserved: 0,
  remaining: 100,
  period_start: '',
  reset_at: '',
  source: 'plan',
  ...over,
});

describe('cloud quota series', () => {
  it('puts daily history of one metric into the last N UTC days, today last, stacked by product in a fixed order', () => {
    const history = [
      row('2026-11-22', 'mcp_actions', 'verto', 2),
      row('2026-11-22', 'mcp_actions', 'mcp', 5),
      row('2026-11-20', 'mcp_actions', 'zeta', 1),
      row('2026-11-22', 'ai_tokens', 'verto', 900),
      row('2026-10-01', 'mcp_actions', 'mcp', 50),
      row('2026-11-23', 'mcp_actions', 'mcp', 7),
      { ...row('2026-11-21', 'mcp_actions', 'mcp', 3), period_start: 'garbage' },
    ];
    const s = cloudSeries(history, 'mcp_actions', 30, NOW);
    expect(s.buckets).toHaveLength(30);
    expect(s.buckets.at(-1)).toEqual({
      start: Date.parse('2026-11-22T00:00:00Z'),
      counts: { verto: 2, mcp: 5 },
      total: 7,
    });
    expect(s.buckets.at(-3)!.counts).toEqual({ zeta: 1 });
    expect(s.results).toEqual(['mcp', 'verto', 'zeta']);
    expect(s.total).toBe(8); // older than 30 days, tomorrow, another metric and a bad date are left out
    expect(s.max).toBe(7);
    expect(historyMetrics(history)).toEqual(['ai_tokens', 'mcp_actions']);
  });

  it('grades a limit: ok below 80 %, near from 80 %, exceeded at the limit, none for a limit of 0', () => {
    expect(quotaLevel({ limit: 100, used: 79 })).toBe('ok');
    expect(quotaLevel({ limit: 100, used: 80 })).toBe('near');
    expect(quotaLevel({ limit: 100, used: 100 })).toBe('exceeded');
    expect(quotaLevel({ limit: 100, used: 250 })).toBe('exceeded');
    expect(quotaLevel({ limit: 0, used: 0 })).toBe('none');
    expect(usedPercent({ limit: 100, used: 250 })).toBe(100);
    expect(usedPercent({ limit: 3, used: 1 })).toBe(33);
    expect(usedPercent({ limit: 0, used: 5 })).toBe(0);
  });

  it('sorts the most urgent limits first', () => {
    const sorted = sortLimits([
      limit({ metric: 'reports', limit: 0 }),
      limit({ metric: 'ai_tokens', used: 10 }),
      limit({ metric: 'mcp_actions', used: 100 }),
      limit({ metric: 'cloud_tasks', used: 90 }),
    ]);
    expect(sorted.map((l) => l.metric)).toEqual(['mcp_actions', 'cloud_tasks', 'ai_tokens', 'reports']);
  });
});
