import type { z } from 'zod';
import type { LimitState } from '../contract/cloud/usage.ts';
import type { CloudFailure, CloudUsageInput, CloudUsageView, QuotaAlert } from '../contract/cloud-actions.ts';
import type { Stats } from '../contract/audit.ts';
import type { Clock } from '../lib/clock.ts';
import type { CloudClient } from './cloud-client.ts';
import { asFailure } from './cloud-client-types.ts';

const DAY = 24 * 3600_000;

type UsageCache = {
  fetched_at: string;
  limits: LimitState[];
  summary: CloudUsageView['summary'];
  history: CloudUsageView['history'];
};

/** cloud.usage: the gateway's limits, summary and history, kept for when the gateway cannot be asked, beside the local counts. */
export function usageViews(d: { client: CloudClient; clock: Clock; stats: () => Stats; alerts: () => QuotaAlert[] }) {
  const c = d.client;
  const iso = (t: number) => new Date(t).toISOString();
  let cache: UsageCache | null = null;

  const view = (source: CloudUsageView['source'], error: CloudFailure | null): CloudUsageView => {
    const s = d.stats();
    return {
      connected: c.connected(),
      source,
      fetched_at: cache?.fetched_at ?? null,
      limits: cache?.limits ?? [],
      summary: cache?.summary ?? null,
      history: cache?.history ?? [],
      local: { since: s.since, usage: s.usage },
      outbox: c.usage.view(),
      quota_alerts: d.alerts(),
      error,
    };
  };

  return {
    /** the limits as last fetched, for the alerts */
    fetchedLimits: () => cache,
    async fetch(i: z.output<typeof CloudUsageInput>): Promise<CloudUsageView> {
      const api = c.api;
      if (!api) return view('local', null);
      const now = d.clock.now();
      try {
        const [limits, summary, history] = await Promise.all([
          api.usageLimits(),
          api.usageSummary({ period: i.period }),
          api.usageHistory({ period: 'day', from: iso(now - (i.days - 1) * DAY - (now % DAY)), limit: 500 }),
        ]);
        const { success: _s, site_id: _id, limits: _l, ...sum } = summary.data;
        cache = { fetched_at: iso(now), limits: limits.data.limits, summary: sum, history: history.data.items };
        return view('cloud', null);
      } catch (e) {
        return view(cache ? 'cached' : 'local', asFailure(e));
      }
    },
    cached: () => view(c.connected() ? (cache ? 'cached' : 'local') : 'local', null),
    /** the old site's figures are not the next one's */
    reset(): void {
      cache = null;
    },
  };
}
