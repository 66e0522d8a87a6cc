import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { uuidv7 } from '../../main/lib/ids.ts';
import { register, type SiteClient } from './helpers/client.ts';
import { startHarness, type Harness } from './helpers/cloud-harness.ts';

/**
 * usage/summary and usage/history read the daily rollups kept with the
 * events: the answers must be exactly what the events say, also
 * for a `from`/`to` that cuts a day (that part is read from the events).
 */
let h: Harness;
let site: SiteClient;
type Ev = {
  event_id: string;
  event: string;
  site_id: string;
  product: string;
  feature: string;
  units: number;
  tokens_input: number;
  tokens_output: number;
  timestamp: string;
};
const events: Ev[] = [];
const HOUR = 3_600_000;
const now = Date.now();
const dayStart = (t: number) => Math.floor(t / 86_400_000) * 86_400_000;

beforeAll(async () => {
  h = await startHarness();
  site = await register(h.gateway);
  const lic = await h.op<{ license_key: string }>('licenses.create', { plan: 'pro' });
  await site.post('license/activate', { license_key: lic.license_key });
  // Four days of events, every 5 hours, two products, tokens on some.
  const start = dayStart(now) - 3 * 86_400_000;
  for (let t = start + HOUR; t < now - HOUR; t += 5 * HOUR) {
    const k = events.length;
    const mcp = k % 3 !== 0;
    events.push({
      event_id: uuidv7(),
      event: mcp ? 'mcp.tool.called' : 'translation.page.translated',
      site_id: site.creds.site_id,
      product: mcp ? 'mcp' : 'verto',
      feature: mcp ? 'mcp.core' : 'verto.translate',
      units: mcp ? 1 : 100 + k,
      tokens_input: k % 2 ? 10 + k : 0,
      tokens_output: k % 2 ? 5 : 0,
      timestamp: new Date(t).toISOString(),
    });
  }
  const r = await site.post('usage/record', { events });
  expect(r.body.accepted).toBe(events.length);
}, 120_000);
afterAll(async () => h?.stop());

/** What history must answer, computed from the events themselves. */
function expected(period: 'day' | 'month', from?: number, to?: number) {
  const buckets = new Map<
    string,
    { period_start: string; metric: string; product: string; feature: string; amount: number; events: number }
  >();
  for (const e of events) {
    const t = Date.parse(e.timestamp);
    if ((from !== undefined && t < from) || (to !== undefined && t >= to)) continue;
    const d = new Date(t);
    const start = period === 'day' ? dayStart(t) : Date.UTC(d.getUTCFullYear(), d.getUTCMonth(), 1);
    const metric = e.event.startsWith('mcp.') ? 'mcp_actions' : 'translation_characters';
    for (const [m, amount] of [
      [metric, e.units],
      ['ai_tokens', e.tokens_input + e.tokens_output],
    ] as const) {
      if (amount <= 0) continue;
      const key = `${start}|${m}|${e.product}|${e.feature}`;
      const b = buckets.get(key) ?? {
        period_start: new Date(start).toISOString(),
        metric: m,
        product: e.product,
        feature: e.feature,
        amount: 0,
        events: 0,
      };
      b.amount += amount;
      b.events += 1;
      buckets.set(key, b);
    }
  }
  const cmp = (x: string, y: string) => (x < y ? -1 : x > y ? 1 : 0);
  return [...buckets.values()].sort(
    (x, y) =>
      cmp(y.period_start, x.period_start) ||
      cmp(x.metric, y.metric) ||
      cmp(x.product, y.product) ||
      cmp(x.feature, y.feature),
  );
}

describe('usage reads from the rollups', () => {
  it('history by day and by month, whole and cut mid-day at either end or within one day, equals the events', async () => {
    const cuts: Array<[number | undefined, number | undefined]> = [
      [undefined, undefined],
      [dayStart(now) - 2 * 86_400_000 + 7 * HOUR + 123, undefined],
      [undefined, dayStart(now) - 86_400_000 + 13 * HOUR],
      [dayStart(now) - 3 * 86_400_000 + 3 * HOUR, dayStart(now) - 86_400_000 + 2 * HOUR],
      [dayStart(now) - 2 * 86_400_000 + 2 * HOUR, dayStart(now) - 2 * 86_400_000 + 20 * HOUR],
      [dayStart(now) - 2 * 86_400_000, dayStart(now) - 86_400_000],
    ];
    for (const period of ['day', 'month'] as const) {
      for (const [from, to] of cuts) {
        const q = [
          `period=${period}`,
          'limit=500',
          ...(from !== undefined ? [`from=${new Date(from).toISOString()}`] : []),
          ...(to !== undefined ? [`to=${new Date(to).toISOString()}`] : []),
        ].join('&');
        const r = await site.get('usage/history', { query: q });
        expect(r.status).toBe(200);
        expect(r.body.items, q).toEqual(expected(period, from, to));
      }
    }
    const filtered = await site.get('usage/history', { query: 'period=day&metric=ai_tokens&product=mcp' });
    expect(filtered.body.items).toEqual(expected('day').filter((b) => b.metric === 'ai_tokens' && b.product === 'mcp'));
  });

  it("summary of a day counts that day's events and totals", async () => {
    const day = dayStart(now) - 86_400_000;
    const r = await site.get('usage/summary', { query: `period=day&at=${new Date(day + 5 * HOUR).toISOString()}` });
    const mine = events.filter((e) => dayStart(Date.parse(e.timestamp)) === day);
    expect(r.body.events).toBe(mine.length);
    const tokens = mine.reduce((n, e) => n + e.tokens_input + e.tokens_output, 0);
    expect(r.body.totals.ai_tokens ?? 0).toBe(tokens);
    expect(r.body.totals.mcp_actions).toBe(mine.filter((e) => e.product === 'mcp').reduce((n, e) => n + e.units, 0));
  });
});
