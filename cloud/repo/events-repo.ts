import type { CloudUsageEvent, Metric, Period } from '../../main/contract/cloud/index.ts';
import type { Queryable } from '../db/db.ts';
import { unitsMetricOf } from '../../main/contract/cloud/index.ts';

/**
 * Inserts events in one statement; the (site_id, event_id) primary key makes
 * a retried or replayed event a no-op. Answers the ids actually inserted.
 */
export async function insertEvents(q: Queryable, siteId: string, events: readonly CloudUsageEvent[], now: Date): Promise<Set<string>> {
  if (!events.length) return new Set();
  const col = <K extends keyof CloudUsageEvent>(k: K) => events.map((e) => e[k]);
  const r = await q.query<{ event_id: string }>(
    `INSERT INTO usage_events (site_id, event_id, event, product, feature, model, units, tokens_input, tokens_output, units_metric, occurred_at, received_at)
     SELECT $1, u.*, $11 FROM unnest($2::text[], $3::text[], $4::text[], $5::text[], $6::text[], $7::bigint[], $8::bigint[], $9::bigint[], $10::text[], $12::timestamptz[])
       AS u(event_id, event, product, feature, model, units, tokens_input, tokens_output, units_metric, occurred_at)
     ON CONFLICT (site_id, event_id) DO NOTHING
     RETURNING event_id`,
    // The time as the counters took it (new Date: UTC, milliseconds), not the text as sent: the database refuses
    // offsets past ±15:59 that RFC 3339 allows, and rounds a finer fraction where Date truncates it (another day at midnight).
    [siteId, col('event_id'), col('event'), col('product'), col('feature'), col('model'), col('units'), col('tokens_input'), col('tokens_output'), events.map((e) => unitsMetricOf(e.event)), now, events.map((e) => new Date(e.timestamp).toISOString())],
  );
  return new Set(r.rows.map((x) => x.event_id));
}

export interface IdempotencyRow {
  body_hash: string;
  status: number | null;
  answer: unknown;
}

/**
 * Claims an Idempotency-Key for the site. A second request with the key waits
 * on the first one's row lock until it commits, then sees its answer.
 */
export async function claimIdempotencyKey(q: Queryable, siteId: string, key: string, bodyHash: string, now: Date): Promise<IdempotencyRow | null> {
  const r = await q.query(`INSERT INTO idempotency_keys (site_id, key, body_hash, created_at) VALUES ($1, $2, $3, $4) ON CONFLICT (site_id, key) DO NOTHING RETURNING 1`, [siteId, key, bodyHash, now]);
  if (r.rows.length) return null;
  return (await q.query<IdempotencyRow>('SELECT body_hash, status, answer FROM idempotency_keys WHERE site_id = $1 AND key = $2', [siteId, key])).rows[0] ?? null;
}

export async function storeIdempotentAnswer(q: Queryable, siteId: string, key: string, status: number, answer: unknown): Promise<void> {
  await q.query('UPDATE idempotency_keys SET status = $3, answer = $4::jsonb WHERE site_id = $1 AND key = $2', [siteId, key, status, JSON.stringify(answer)]);
}

/** Keys are kept a week: long past any client's retries. */
export async function pruneIdempotencyKeys(q: Queryable, before: Date): Promise<number> {
  return (await q.query('DELETE FROM idempotency_keys WHERE created_at < $1', [before])).rowCount;
}

// Each event as (metric, amount) rows: its units under its name's metric, its tokens under ai_tokens.
const AMOUNTS = `CROSS JOIN LATERAL (VALUES (e.units_metric, e.units), ('ai_tokens', e.tokens_input + e.tokens_output)) AS m(metric, amount)`;

export interface TotalsRow {
  product: string;
  metric: string;
  amount: number;
}

export async function siteTotals(q: Queryable, siteId: string, from: Date, to: Date): Promise<{ events: number; rows: TotalsRow[] }> {
  const n = await q.query<{ n: number }>('SELECT count(*)::int AS n FROM usage_events WHERE site_id = $1 AND occurred_at >= $2 AND occurred_at < $3', [siteId, from, to]);
  const r = await q.query<TotalsRow>(
    `SELECT e.product, m.metric, sum(m.amount)::bigint AS amount
       FROM usage_events e ${AMOUNTS}
      WHERE e.site_id = $1 AND e.occurred_at >= $2 AND e.occurred_at < $3 AND m.metric IS NOT NULL AND m.amount > 0
      GROUP BY e.product, m.metric ORDER BY e.product, m.metric`,
    [siteId, from, to],
  );
  return { events: n.rows[0]!.n, rows: r.rows };
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

/** Buckets per period x metric x product x feature, newest first, by offset (the history is an aggregate, not a log). */
export async function history(q: Queryable, siteId: string, f: HistoryFilter, offset: number, limit: number): Promise<HistoryRow[]> {
  const params: unknown[] = [siteId, f.period];
  const where = ['e.site_id = $1', 'm.metric IS NOT NULL', 'm.amount > 0'];
  const add = (sql: string, v: unknown) => {
    params.push(v);
    where.push(sql.replace('?', `$${params.length}`));
  };
  if (f.metric) add('m.metric = ?', f.metric);
  if (f.feature) add('e.feature = ?', f.feature);
  if (f.product) add('e.product = ?', f.product);
  if (f.from) add('e.occurred_at >= ?', f.from);
  if (f.to) add('e.occurred_at < ?', f.to);
  params.push(limit, offset);
  const r = await q.query<HistoryRow>(
    `SELECT date_trunc($2, e.occurred_at AT TIME ZONE 'UTC') AT TIME ZONE 'UTC' AS period_start, m.metric, e.product, e.feature,
            sum(m.amount)::bigint AS amount, count(*)::int AS events
       FROM usage_events e ${AMOUNTS}
      WHERE ${where.join(' AND ')}
      GROUP BY 1, m.metric, e.product, e.feature
      ORDER BY 1 DESC, m.metric, e.product, e.feature
      LIMIT $${params.length - 1} OFFSET $${params.length}`,
    params,
  );
  return r.rows;
}
