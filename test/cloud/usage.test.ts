import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { UsageHistoryAnswer, UsageRecordAnswer, UsageSummaryAnswer } from '../../main/contract/cloud/index.ts';
import { uuidv7 } from '../../main/lib/ids.ts';
import { register, type SiteClient } from './helpers/client.ts';
import { startHarness, type Harness } from './helpers/cloud-harness.ts';

let h: Harness;
let site: SiteClient;

const ev = (s: SiteClient, o: Record<string, unknown> = {}) => ({
  event_id: uuidv7(),
  event: 'mcp.tool.called',
  site_id: s.creds.site_id,
  product: 'mcp',
  feature: 'mcp.core',
  model: '',
  units: 1,
  tokens_input: 0,
  tokens_output: 0,
  timestamp: new Date().toISOString(),
  ...o,
});

async function licensed(plan = 'pro'): Promise<SiteClient> {
  const s = await register(h.gateway);
  const l = await h.op<{ license_key: string }>('licenses.create', { plan });
  await s.post('license/activate', { license_key: l.license_key });
  return s;
}

beforeAll(async () => {
  h = await startHarness();
  site = await licensed();
}, 180_000);
afterAll(() => h?.stop());

describe('usage/record', () => {
  it('records one event; a retry with the same event_id is a duplicate', async () => {
    const e = ev(site, {
      event: 'ai.generation.completed',
      product: 'verto',
      feature: 'verto.translate',
      model: 'm1',
      units: 0,
      tokens_input: 10,
      tokens_output: 5,
    });
    const r = await site.post('usage/record', e);
    expect(r.status).toBe(200);
    expect(UsageRecordAnswer.parse(r.body)).toEqual({
      success: true,
      results: [{ event_id: e.event_id, status: 'accepted' }],
      accepted: 1,
      duplicate: 0,
      rejected: 0,
    });
    const again = await site.post('usage/record', e);
    expect(again.body.results[0].status).toBe('duplicate');
  });

  it('records a batch with per-event answers; malformed events are rejected with a reason and the rest accepted', async () => {
    const good = [ev(site), ev(site, { units: 3 })];
    const events = [
      good[0],
      { ...ev(site), units: -1 },
      { ...ev(site), site_id: 'site_someone_else' },
      { ...ev(site), timestamp: new Date(Date.now() + 3600_000).toISOString() },
      { ...ev(site), event_id: 'not-a-uuid' },
      'a string',
      { ...ev(site), extra: '__proto__' },
      good[1],
      good[0],
    ];
    const r = await site.post('usage/record', { events });
    expect(r.status).toBe(200);
    const res = r.body.results;
    expect(res.map((x: { status: string }) => x.status)).toEqual([
      'accepted',
      'rejected',
      'rejected',
      'rejected',
      'rejected',
      'rejected',
      'rejected',
      'accepted',
      'duplicate',
    ]);
    expect(res.map((x: { reason?: string }) => x.reason ?? null)).toEqual([
      null,
      'invalid_event',
      'site_mismatch',
      'timestamp_out_of_range',
      'invalid_event',
      'invalid_event',
      'invalid_event',
      null,
      null,
    ]);
    expect(res[1].message).toMatch(/units/);
    expect(r.body).toMatchObject({ accepted: 2, duplicate: 1, rejected: 6 });
  });

  it('refuses a batch over 100, an empty batch, and a single malformed event, as 400', async () => {
    const over = await site.post('usage/record', { events: Array.from({ length: 101 }, () => ev(site)) });
    expect([over.status, over.body.error.code]).toEqual([400, 'invalid_request']);
    expect(over.body.error.message).toMatch(/100/);
    expect((await site.post('usage/record', { events: [] })).status).toBe(400);
    const bad = await site.post('usage/record', { ...ev(site), units: 'lots' });
    expect([bad.status, bad.body.error.code, bad.body.error.reason]).toEqual([400, 'invalid_request', 'invalid_event']);
  });

  it('accepts exactly 100', async () => {
    const r = await site.post('usage/record', { events: Array.from({ length: 100 }, () => ev(site)) });
    expect(r.body.accepted).toBe(100);
  });

  it('needs an Idempotency-Key; the same key replays the first answer; with another body it is refused', async () => {
    const body = { events: [ev(site)] };
    const noKey = await site.call('POST', 'usage/record', { body, headers: { 'Idempotency-Key': '' } });
    expect(noKey.status).toBe(400);
    const first = await site.post('usage/record', body, { idempotencyKey: 'idem-1' });
    const replay = await site.post('usage/record', body, { idempotencyKey: 'idem-1' });
    expect(replay.status).toBe(200);
    expect(replay.headers['idempotent-replayed']).toBe('true');
    expect(replay.body).toEqual(first.body);
    const other = await site.post('usage/record', { events: [ev(site)] }, { idempotencyKey: 'idem-1' });
    expect([other.status, other.body.error.code]).toEqual([409, 'conflict']);
  });
});

describe('quotas', () => {
  it('enforces a limit: a single event over it is 429 quota_exceeded with Retry-After and the details; a batch is accepted up to the limit', async () => {
    const s = await licensed();
    await h.op('limits.set', { scope: 'site', subject: s.creds.site_id, metric: 'reports', period: 'day', limit: 5 });
    const batch = Array.from({ length: 4 }, () =>
      ev(s, { event: 'report.generated', product: 'aeo', feature: 'aeo.reports', units: 2 }),
    );
    const r = await s.post('usage/record', { events: batch });
    expect(r.body.results.map((x: { status: string }) => x.status)).toEqual([
      'accepted',
      'accepted',
      'rejected',
      'rejected',
    ]);
    expect(r.body.results[2]).toMatchObject({
      reason: 'quota_exceeded',
      quota: { scope: 'site', subject: s.creds.site_id, metric: 'reports', period: 'day', limit: 5, used: 4 },
    });
    const one = await s.post(
      'usage/record',
      ev(s, { event: 'report.generated', product: 'aeo', feature: 'aeo.reports', units: 2 }),
    );
    expect([one.status, one.body.error.code]).toEqual([429, 'quota_exceeded']);
    expect(one.body.error).toMatchObject({ scope: 'site', metric: 'reports', limit: 5, used: 4, retryable: false });
    const resetIn = (Date.parse(one.body.error.reset_at) - Date.now()) / 1000;
    expect(Number(one.headers['retry-after'])).toBeGreaterThan(0);
    expect(Math.abs(Number(one.headers['retry-after']) - resetIn)).toBeLessThan(5);
    // one unit still fits
    expect(
      (
        await s.post(
          'usage/record',
          ev(s, { event: 'report.generated', product: 'aeo', feature: 'aeo.reports', units: 1 }),
        )
      ).status,
    ).toBe(200);
    const limits = await s.get('usage/limits');
    expect(limits.body.limits).toContainEqual(
      expect.objectContaining({
        scope: 'site',
        metric: 'reports',
        period: 'day',
        limit: 5,
        used: 5,
        remaining: 0,
        source: 'operator',
      }),
    );
  });

  it('account, department and project limits count every site of the account', async () => {
    const l = await h.op<{ license_key: string; account_id: string }>('licenses.create', { plan: 'agency' });
    const [a, b] = [await register(h.gateway), await register(h.gateway)];
    await a.post('license/activate', { license_key: l.license_key });
    await b.post('license/activate', { license_key: l.license_key });
    await h.op('sites.assign', { id: a.creds.site_id, department: 'marketing' });
    await h.op('sites.assign', { id: b.creds.site_id, department: 'marketing' });
    await h.op('limits.set', {
      scope: 'department',
      subject: `${l.account_id}/marketing`,
      metric: 'ai_tokens',
      period: 'month',
      limit: 100,
    });
    const ai = (s: SiteClient, n: number) =>
      ev(s, {
        event: 'ai.generation.completed',
        product: 'pro',
        feature: 'ai.generate',
        units: 0,
        tokens_input: n,
        tokens_output: 0,
      });
    expect((await a.post('usage/record', ai(a, 60))).status).toBe(200);
    const over = await b.post('usage/record', ai(b, 50));
    expect([over.status, over.body.error.scope, over.body.error.used]).toEqual([429, 'department', 60]);
    expect((await b.post('usage/record', ai(b, 40))).status).toBe(200);
  });

  it('concurrent batches against one limit never overshoot it', async () => {
    const s = await licensed();
    await h.op('limits.set', {
      scope: 'site',
      subject: s.creds.site_id,
      metric: 'cloud_tasks',
      period: 'month',
      limit: 50,
    });
    const answers = await Promise.all(
      Array.from({ length: 8 }, () =>
        s.post('usage/record', {
          events: Array.from({ length: 10 }, () =>
            ev(s, { event: 'task.completed', product: 'pro', feature: 'ai.generate' }),
          ),
        }),
      ),
    );
    const accepted = answers.reduce((n, r) => n + r.body.accepted, 0);
    expect(accepted).toBe(50);
    const summary = await s.get('usage/summary', { query: 'period=month' });
    expect(summary.body.totals.cloud_tasks).toBe(50);
  });

  it('a batch repeating stored events among new ones answers them as duplicates and counts them once, in the counters and the rollups', async () => {
    const s = await licensed();
    const stored = [ev(s, { units: 2 }), ev(s, { units: 5 })];
    expect((await s.post('usage/record', { events: stored })).body).toMatchObject({ accepted: 2, duplicate: 0 });
    const fresh = [ev(s, { units: 3 }), ev(s, { units: 7 })];
    const r = await s.post('usage/record', { events: [fresh[0], stored[1], fresh[1], stored[0]] });
    expect(r.body.results).toEqual([
      { event_id: fresh[0]!.event_id, status: 'accepted' },
      { event_id: stored[1]!.event_id, status: 'duplicate' },
      { event_id: fresh[1]!.event_id, status: 'accepted' },
      { event_id: stored[0]!.event_id, status: 'duplicate' },
    ]);
    expect(r.body).toMatchObject({ accepted: 2, duplicate: 2, rejected: 0 });
    const sum = UsageSummaryAnswer.parse((await s.get('usage/summary', { query: 'period=day' })).body);
    expect([sum.events, sum.totals.mcp_actions]).toEqual([4, 17]);
    const limits = (await s.get('usage/limits')).body.limits;
    expect(
      limits.find(
        (l: { scope: string; metric: string; period: string }) =>
          l.scope === 'site' && l.metric === 'mcp_actions' && l.period === 'day',
      )?.used,
    ).toBe(17);
  });
});

describe('usage/summary, usage/limits, usage/history', () => {
  it('answer from the same data', async () => {
    const s = await licensed();
    const day = new Date().toISOString();
    await s.post('usage/record', {
      events: [
        ev(s, { units: 2, timestamp: day }),
        ev(s, {
          event: 'translation.completed',
          product: 'verto',
          feature: 'verto.translate',
          units: 1000,
          tokens_input: 300,
          tokens_output: 400,
        }),
        ev(s, { event: 'indexing.requested', product: 'aeo', feature: 'seo.analyze', units: 3 }),
      ],
    });
    const sum = UsageSummaryAnswer.parse((await s.get('usage/summary', { query: 'period=day' })).body);
    expect(sum.events).toBe(3);
    expect(sum.totals).toEqual({ mcp_actions: 2, translation_characters: 1000, ai_tokens: 700, indexing_requests: 3 });
    expect(sum.by_product.verto).toEqual({ translation_characters: 1000, ai_tokens: 700 });
    const limits = (await s.get('usage/limits')).body.limits;
    const used = (metric: string, period: string) =>
      limits.find(
        (l: { scope: string; metric: string; period: string }) =>
          l.scope === 'site' && l.metric === metric && l.period === period,
      )?.used;
    expect([
      used('mcp_actions', 'day'),
      used('translation_characters', 'month'),
      used('ai_tokens', 'month'),
      used('indexing_requests', 'month'),
    ]).toEqual([2, 1000, 700, 3]);
    const hist = UsageHistoryAnswer.parse(
      (await s.get('usage/history', { query: 'period=day&metric=ai_tokens' })).body,
    );
    expect(hist.items).toEqual([
      {
        period_start: sum.period_start,
        metric: 'ai_tokens',
        product: 'verto',
        feature: 'verto.translate',
        amount: 700,
        events: 1,
      },
    ]);
    const byProduct = (await s.get('usage/history', { query: 'period=month&product=aeo' })).body;
    expect(byProduct.items).toHaveLength(1);
    expect(byProduct.items[0]).toMatchObject({ metric: 'indexing_requests', amount: 3 });
  });

  it('paginates history with next_cursor and refuses a forged cursor', async () => {
    const s = await licensed();
    const days = [0, 1, 2, 3, 4].map((d) => new Date(Date.now() - d * 86_400_000).toISOString());
    await s.post('usage/record', { events: days.map((t) => ev(s, { timestamp: t })) });
    const p1 = (await s.get('usage/history', { query: 'period=day&limit=2' })).body;
    expect(p1.items).toHaveLength(2);
    const p2 = (await s.get('usage/history', { query: `period=day&limit=2&cursor=${p1.next_cursor}` })).body;
    const p3 = (await s.get('usage/history', { query: `period=day&limit=2&cursor=${p2.next_cursor}` })).body;
    expect(p3.next_cursor).toBeNull();
    const all = [...p1.items, ...p2.items, ...p3.items].map((i: { period_start: string }) => i.period_start);
    expect(new Set(all).size).toBe(5);
    expect(all).toEqual([...all].sort().reverse());
    expect((await s.get('usage/history', { query: 'cursor=AAAA' })).status).toBe(400);
    expect((await s.get('usage/history', { query: 'period=week' })).status).toBe(400);
    expect((await s.get('usage/history', { query: 'limit=100000' })).status).toBe(400);
  });
});
