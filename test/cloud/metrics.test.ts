import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { siteById } from '../../cloud/repo/sites-repo.ts';
import { release, reserve } from '../../cloud/services/reservations-service.ts';
import { uuidv7 } from '../../main/lib/ids.ts';
import { startOpenAiFixture } from '../fixtures/ai-providers/fixture-provider.ts';
import { rawRequest, type SiteClient } from './helpers/client.ts';
import { licensedSite } from './helpers/licensed.ts';
import { onPostgres, startHarness, type Harness } from './helpers/cloud-harness.ts';

/**
 * /metrics on the real gateway: Prometheus text with the request, latency,
 * usage, quota and database series, moved by real traffic; readable from this
 * host only (not through a proxy), or with the metrics token when one is set.
 */
let h: Harness;
let site: SiteClient;
const ev = (s: SiteClient, o: Record<string, unknown> = {}) => ({
  event_id: uuidv7(),
  event: 'report.generated',
  site_id: s.creds.site_id,
  product: 'aeo',
  feature: 'aeo.reports',
  model: '',
  units: 1,
  tokens_input: 0,
  tokens_output: 0,
  timestamp: new Date().toISOString(),
  ...o,
});

/** The value of one series (name plus its exact label set), 0 when absent. */
function series(text: string, name: string): number {
  const line = text.split('\n').find((l) => l.startsWith(`${name} `));
  return line ? Number(line.slice(name.length + 1)) : 0;
}

const scrape = async (headers: Record<string, string> = {}, base = h.svc.baseUrl) =>
  rawRequest(`${base}/metrics`, 'GET', headers);

beforeAll(async () => {
  h = await startHarness();
  site = await licensedSite(h);
}, 180_000);
afterAll(() => h?.stop());

describe('/metrics', () => {
  it('counts requests by route and status, their latency, recorded events, quota refusals and database errors', async () => {
    const first = await scrape();
    expect(first.status).toBe(200);
    expect(first.headers['content-type']).toBe('text/plain; version=0.0.4; charset=utf-8');
    const before = String((await scrape()).body);

    await h.op('limits.set', {
      scope: 'site',
      subject: site.creds.site_id,
      metric: 'reports',
      period: 'day',
      limit: 3,
    });
    expect((await site.post('usage/record', { events: [ev(site), ev(site)] })).status).toBe(200);
    const refused = await site.post('usage/record', ev(site, { units: 5 }));
    expect(refused.status).toBe(429);
    await rawRequest(`${h.gateway}/no/such/route`, 'GET', {});

    const after = String((await scrape()).body);
    const ok = 'gatehouse_cloud_http_requests_total{route="usage/record",method="POST",status="200"}';
    expect(series(after, ok) - series(before, ok)).toBe(1);
    const quota = 'gatehouse_cloud_http_requests_total{route="usage/record",method="POST",status="429"}';
    expect(series(after, quota) - series(before, quota)).toBe(1);
    const unmatched = 'gatehouse_cloud_http_requests_total{route="unmatched",method="GET",status="404"}';
    expect(series(after, unmatched) - series(before, unmatched)).toBe(1);
    expect(
      series(after, 'gatehouse_cloud_http_request_duration_seconds_count{route="usage/record"}'),
    ).toBeGreaterThanOrEqual(2);
    expect(after).toMatch(/gatehouse_cloud_http_request_duration_seconds_bucket\{le="0\.005",route="usage\/record"\}/);
    expect(
      series(after, 'gatehouse_cloud_usage_events_recorded_total') -
        series(before, 'gatehouse_cloud_usage_events_recorded_total'),
    ).toBe(2);
    expect(
      series(after, 'gatehouse_cloud_quota_refusals_total{metric="reports"}') -
        series(before, 'gatehouse_cloud_quota_refusals_total{metric="reports"}'),
    ).toBe(1);
    expect(after).toContain('gatehouse_cloud_ai_holds_open 0');
    expect(after).toContain('# TYPE gatehouse_cloud_provider_calls_total counter');
    expect(after).toContain('# TYPE gatehouse_cloud_db_errors_total counter');
    // node-postgres's pool on PostgreSQL; PGlite has none
    if (onPostgres) expect(after).toMatch(/gatehouse_cloud_db_pool_connections\{state="total"\} [1-9]/);
    else expect(after).not.toMatch(/gatehouse_cloud_db_pool_connections\{/);
    // nothing about who: no site ids, no paths beyond route templates
    expect(after).not.toContain(site.creds.site_id);
    expect(after).not.toContain('no/such/route');
  });

  it('shows the AI budget holds still held', async () => {
    const row = (await siteById(h.svc.ctx.db, site.creds.site_id))!;
    const hold = await reserve(h.svc.ctx, row, 'ai_tokens', 10);
    try {
      expect(String((await scrape()).body)).toContain('gatehouse_cloud_ai_holds_open 1');
    } finally {
      await release(h.svc.ctx, hold.id);
    }
    expect(String((await scrape()).body)).toContain('gatehouse_cloud_ai_holds_open 0');
  });

  it('counts provider calls by provider and outcome, and the generation as a recorded event', async () => {
    const fx = await startOpenAiFixture();
    try {
      h.svc.ctx.ai.env.KEY_METRICS_FX = fx.key;
      await h.op('providers.add', {
        id: 'metrics-fx',
        kind: 'openai',
        base_url: fx.baseUrl,
        api_key_env: 'KEY_METRICS_FX',
        models: ['m-1'],
      });
      const before = String((await scrape()).body);
      fx.script({ kind: 'server_error' });
      const generate = () =>
        site.post('ai/generate', {
          product: 'verto',
          feature: 'verto.translate',
          model: 'm-1',
          messages: [{ role: 'user', content: 'hi' }],
          max_tokens: 20,
        });
      expect((await generate()).status).toBe(503);
      expect((await generate()).status).toBe(200);
      const after = String((await scrape()).body);
      const delta = (name: string) => series(after, name) - series(before, name);
      expect([
        delta('gatehouse_cloud_provider_calls_total{provider="metrics-fx",outcome="error"}'),
        delta('gatehouse_cloud_provider_calls_total{provider="metrics-fx",outcome="ok"}'),
      ]).toEqual([1, 1]);
      expect(delta('gatehouse_cloud_usage_events_recorded_total')).toBe(1);
    } finally {
      await fx.close();
    }
  });

  it('counts a failed statement as a database error', async () => {
    const name = 'gatehouse_cloud_db_errors_total{kind="query"}';
    const before = series(String((await scrape()).body), name);
    await h.svc.ctx.db.query('SELECT * FROM no_such_table').catch(() => null);
    expect(series(String((await scrape()).body), name) - before).toBe(1);
  });

  it('is refused (404, as a path that does not exist) through a proxy on this host', async () => {
    for (const headers of [{ 'X-Forwarded-For': '203.0.113.9' }, { Forwarded: 'for=203.0.113.9' }] as Record<
      string,
      string
    >[]) {
      const r = await scrape(headers);
      expect([r.status, r.body.error?.code]).toEqual([404, 'not_found']);
    }
  });

  it('with a metrics token set, needs it as a Bearer token, also from this host', async () => {
    const other = await startHarness({ metricsToken: 'metrics-token-0123456789' });
    try {
      expect((await scrape({}, other.svc.baseUrl)).status).toBe(404);
      expect((await scrape({ Authorization: 'Bearer wrong' }, other.svc.baseUrl)).status).toBe(404);
      const r = await scrape({ Authorization: 'Bearer metrics-token-0123456789' }, other.svc.baseUrl);
      expect(r.status).toBe(200);
      expect(String(r.body)).toContain('# TYPE gatehouse_cloud_http_requests_total counter');
    } finally {
      await other.stop();
    }
  });
});
