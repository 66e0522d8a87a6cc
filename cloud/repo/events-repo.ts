import type { Metric, Period } from '../../main/contract/cloud/index.ts';
import type { Queryable } from '../db/db.ts';

/** Keys are kept a week: long past any client's retries. */
export async function pruneIdempotencyKeys(q: Queryable, before: Date): Promise<number> {
  return (await q.query('DELETE FROM idempotency_keys WHERE created_at < $1', [before])).rowCount;
}

// Each event as (metric, amount) rows: its units under its name's metric, its tokens under ai_tokens (as the rollups count them).
const AMOUNTS = `CROSS JOIN LATERAL (VALUES (e.units_metric, e.units), ('ai_tokens', e.tokens_input + e.tokens_output)) AS m(metric, amount)`;

export interface TotalsRow {
  product: string;
  metric: string;
  amount: number;
}

/**
 * A site's totals over whole UTC days (a summary's period), from the
 * rollups: a few rows per day whatever the number of events. metric ''
 * holds the event count.
 */
export async function siteTotals(
  q: Queryable,
  siteId: string,
  from: Date,
  to: Date,
): Promise<{ events: number; rows: TotalsRow[] }> {
  const r = await q.query<TotalsRow>(
    `SELECT product, metric, sum(CASE WHEN metric = '' THEN events ELSE amount END)::bigint AS amount
       FROM usage_rollups WHERE site_id = $1 AND bucket >= $2 AND bucket < $3
      GROUP BY product, metric ORDER BY product, metric`,
    [siteId, from, to],
  );
  const events = r.rows.filter((x) => x.metric === '').reduce((n, x) => n + x.amount, 0);
  return { events, rows: r.rows.filter((x) => x.metric !== '') };
}

export interface HistoryFilter {
  period: Period;
  metric?: Metric;
  feature?: string;
  product?: string;
  from?: Date;
  to?: Date;
}

export interface HistoryRow {
  period_start: string;
  metric: Metric;
  product: string;
  feature: string;
  amount: number;
  events: number;
}

const DAY_MS = 86_400_000;
const floorDay = (d: Date) => new Date(Math.floor(d.getTime() / DAY_MS) * DAY_MS);
const ceilDay = (d: Date) => new Date(Math.ceil(d.getTime() / DAY_MS) * DAY_MS);

/**
 * Buckets per period x metric x product x feature, newest first, by offset
 * (the history is an aggregate, not a log). Whole days come from the
 * rollups; only the part of a day a `from` or `to` cuts is read from the
 * events (at most a day at each end), so the cost follows the days asked
 * for, not the events stored.
 */
export async function history(
  q: Queryable,
  siteId: string,
  f: HistoryFilter,
  offset: number,
  limit: number,
): Promise<HistoryRow[]> {
  const params: unknown[] = [siteId, f.period];
  const p = (v: unknown) => (params.push(v), `$${params.length}`);
  const filters: string[] = [];
  if (f.metric) filters.push(`metric = ${p(f.metric)}`);
  if (f.feature) filters.push(`feature = ${p(f.feature)}`);
  if (f.product) filters.push(`product = ${p(f.product)}`);
  // Whole days [lo, hi) from the rollups, the cut days' parts [from, lo) and [hi, to) from the events.
  let lo = f.from ? ceilDay(f.from) : null;
  let hi = f.to ? floorDay(f.to) : null;
  if (lo && hi && lo > hi) lo = hi = f.from!; // within one day: the events only
  const rollupWhere = [
    'site_id = $1',
    "metric <> ''",
    ...filters,
    ...(lo ? [`bucket >= ${p(lo)}`] : []),
    ...(hi ? [`bucket < ${p(hi)}`] : []),
  ];
  const edges: string[] = [];
  if (f.from && lo && f.from < lo) edges.push(`(occurred_at >= ${p(f.from)} AND occurred_at < ${p(lo)})`);
  if (f.to && hi && hi < f.to) edges.push(`(occurred_at >= ${p(hi)} AND occurred_at < ${p(f.to)})`);
  const eventPart = edges.length
    ? `UNION ALL
       SELECT e.occurred_at AS at, m.metric, e.product, e.feature, m.amount, 1 AS events
         FROM usage_events e ${AMOUNTS}
        WHERE e.site_id = $1 AND m.metric IS NOT NULL AND m.amount > 0 AND (${edges.join(' OR ')})`
    : '';
  const limitAt = p(limit);
  const offsetAt = p(offset);
  const r = await q.query<HistoryRow>(
    `SELECT date_trunc($2, at AT TIME ZONE 'UTC') AT TIME ZONE 'UTC' AS period_start, metric, product, feature,
            sum(amount)::bigint AS amount, sum(events)::int AS events
       FROM (SELECT bucket AS at, metric, product, feature, amount, events FROM usage_rollups WHERE ${rollupWhere.join(' AND ')}
             ${eventPart}) AS src
      WHERE ${filters.length ? filters.join(' AND ') : 'true'}
      GROUP BY 1, metric, product, feature
      ORDER BY 1 DESC, metric, product, feature
      LIMIT ${limitAt} OFFSET ${offsetAt}`,
    params,
  );
  return r.rows;
}
