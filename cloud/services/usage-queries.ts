import type { z } from 'zod';
import type {
  UsageHistoryAnswer,
  UsageHistoryQuery,
  UsageSummaryAnswer,
  UsageSummaryQuery,
} from '../../main/contract/cloud/index.ts';
import { encodeCursor } from '../domain/cursor.ts';
import { cursorOffset } from '../http/query.ts';
import { periodReset, periodStart } from '../domain/periods.ts';
import { history, siteTotals } from '../repo/events-repo.ts';
import type { SiteRow } from '../repo/sites-repo.ts';
import type { Ctx } from './context.ts';
import { loadGrants, siteLimits } from './grants-service.ts';
import { limitStates } from './usage-service.ts';

/** usage/limits, usage/summary and usage/history: all read from the events and the counters usage/record writes. */
export async function usageLimits(ctx: Ctx, site: SiteRow) {
  const now = ctx.now();
  const g = await loadGrants(ctx.db, site, now);
  return { success: true as const, limits: await limitStates(ctx.db, await siteLimits(ctx.db, g, ctx.cache), now) };
}

export async function usageSummary(
  ctx: Ctx,
  site: SiteRow,
  query: z.infer<typeof UsageSummaryQuery>,
): Promise<UsageSummaryAnswer> {
  const now = ctx.now();
  const at = query.at ? new Date(query.at) : now;
  const from = periodStart(query.period, at);
  const to = periodReset(query.period, at);
  const { events, rows } = await siteTotals(ctx.db, site.id, from, to);
  const totals: Record<string, number> = {};
  const byProduct: Record<string, Record<string, number>> = {};
  for (const r of rows) {
    totals[r.metric] = (totals[r.metric] ?? 0) + r.amount;
    (byProduct[r.product] ??= {})[r.metric] = r.amount;
  }
  const g = await loadGrants(ctx.db, site, now);
  const limits = (await limitStates(ctx.db, await siteLimits(ctx.db, g, ctx.cache), at)).filter(
    (l) => l.period === query.period,
  );
  return {
    success: true,
    site_id: site.id,
    period: query.period,
    period_start: from.toISOString(),
    reset_at: to.toISOString(),
    events,
    totals,
    by_product: byProduct,
    limits,
  };
}

export async function usageHistory(
  ctx: Ctx,
  site: SiteRow,
  query: z.infer<typeof UsageHistoryQuery>,
): Promise<UsageHistoryAnswer> {
  const offset = cursorOffset(query.cursor);
  const rows = await history(
    ctx.db,
    site.id,
    {
      period: query.period,
      metric: query.metric,
      feature: query.feature,
      product: query.product,
      from: query.from ? new Date(query.from) : undefined,
      to: query.to ? new Date(query.to) : undefined,
    },
    offset,
    query.limit + 1,
  );
  const more = rows.length > query.limit;
  return {
    success: true,
    period: query.period,
    items: rows.slice(0, query.limit),
    next_cursor: more ? encodeCursor(offset + query.limit) : null,
  };
}
