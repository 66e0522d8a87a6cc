import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import pg from 'pg';
import { uuidv7 } from '../../main/lib/ids.ts';
import { register, SiteClient } from './helpers/client.ts';
import { freshDatabaseUrl, onPostgres, startHarness, TEST_MASTER_KEY, type Harness } from './helpers/cloud-harness.ts';
import { reservationFor } from '../../cloud/ai/ai-router.ts';
import { startOpenAiFixture, type FixtureProvider } from '../fixtures/ai-providers/fixture-provider.ts';

/**
 * The gateway's concurrency check, on PostgreSQL (GATEHOUSE_CLOUD_TEST_DB=postgres,
 * run by .ci/run through scripts/with-postgres.sh): two service instances on one
 * database, 8 concurrent clients of one site recording usage against one quota
 * through both instances and replaying each other's event ids.
 */
describe.skipIf(!onPostgres)('two instances on one PostgreSQL', () => {
  let url: string;
  let a: Harness;
  let b: Harness;
  let provider: FixtureProvider;
  beforeAll(async () => {
    url = await freshDatabaseUrl();
    provider = await startOpenAiFixture();
    const env = { GATEHOUSE_CLOUD_MASTER_KEY: TEST_MASTER_KEY, KEY_FIXTURE: provider.key };
    [a, b] = await Promise.all([startHarness({ databaseUrl: url, env }), startHarness({ databaseUrl: url, env })]);
  }, 180_000);
  afterAll(async () => {
    await a?.stop();
    await b?.stop();
    await provider?.close();
  });

  it('never exceeds the quota, never counts an event twice, and both instances agree with the rows', async () => {
    const site = await register(a.gateway);
    const lic = await a.op<{ license_key: string }>('licenses.create', { plan: 'pro' });
    expect((await site.post('license/activate', { license_key: lic.license_key })).status).toBe(200);
    const LIMIT = 300;
    await b.op('limits.set', {
      scope: 'site',
      subject: site.creds.site_id,
      metric: 'mcp_actions',
      period: 'day',
      limit: LIMIT,
    });

    // 600 distinct events of 1 unit; every client sends its own share plus its neighbour's (replays), in batches of 25, through alternating instances.
    const events = Array.from({ length: 600 }, () => ({
      event_id: uuidv7(),
      event: 'mcp.tool.called',
      site_id: site.creds.site_id,
      product: 'mcp',
      feature: 'mcp.core',
      units: 1,
      timestamp: new Date().toISOString(),
    }));
    const share = (i: number) => events.slice(i * 75, (i + 1) * 75);
    const clients = Array.from({ length: 8 }, (_, i) => new SiteClient(i % 2 ? b.gateway : a.gateway, site.creds));
    const accepted = new Map<string, number>();
    await Promise.all(
      clients.map(async (c, i) => {
        const mine = [...share(i), ...share((i + 1) % 8)];
        for (let k = 0; k < mine.length; k += 25) {
          const r = await c.post('usage/record', { events: mine.slice(k, k + 25) });
          expect(r.status).toBe(200);
          for (const x of r.body.results) {
            expect(['accepted', 'duplicate', 'rejected']).toContain(x.status);
            if (x.status === 'rejected') expect(x.reason).toBe('quota_exceeded');
            if (x.status === 'accepted') accepted.set(x.event_id, (accepted.get(x.event_id) ?? 0) + 1);
          }
        }
      }),
    );
    expect([...accepted.values()].every((n) => n === 1)).toBe(true);
    expect(accepted.size).toBe(LIMIT);

    const db = new pg.Client({ connectionString: url });
    await db.connect();
    const rows = (
      await db.query('SELECT count(*)::int AS n, sum(units)::int AS units FROM usage_events WHERE site_id = $1', [
        site.creds.site_id,
      ])
    ).rows[0];
    const counter = (
      await db.query(
        `SELECT used::int FROM usage_counters WHERE scope = 'site' AND subject = $1 AND metric = 'mcp_actions' AND period = 'day'`,
        [site.creds.site_id],
      )
    ).rows[0];
    await db.end();
    expect(rows).toEqual({ n: LIMIT, units: LIMIT });
    expect(counter.used).toBe(LIMIT);
    expect(new Set(await pgIds(url, site.creds.site_id))).toEqual(new Set(accepted.keys()));

    for (const h of [a, b]) {
      const c = new SiteClient(h.gateway, site.creds);
      const sum = await c.get('usage/summary', { query: 'period=day' });
      expect(sum.body.totals.mcp_actions).toBe(LIMIT);
      expect(sum.body.events).toBe(LIMIT);
      const lim = (await c.get('usage/limits')).body.limits.find(
        (l: { metric: string; period: string; scope: string }) =>
          l.scope === 'site' && l.metric === 'mcp_actions' && l.period === 'day',
      );
      expect(lim).toMatchObject({ limit: LIMIT, used: LIMIT, remaining: 0 });
    }
  });

  it('AI generations through both instances never overshoot one token budget, and each is recorded once', async () => {
    const site = await register(a.gateway);
    const lic = await a.op<{ license_key: string }>('licenses.create', { plan: 'pro' });
    expect((await site.post('license/activate', { license_key: lic.license_key })).status).toBe(200);
    await a.op('providers.add', {
      id: 'fixture',
      kind: 'openai',
      base_url: provider.baseUrl,
      api_key_env: 'KEY_FIXTURE',
      models: ['small-1'],
    });
    const req = {
      product: 'verto',
      feature: 'verto.translate',
      model: 'small-1',
      max_tokens: 30,
      messages: [{ role: 'user', content: 'Hello there' }],
    };
    const LIMIT = 4 * reservationFor(req as never);
    await b.op('limits.set', {
      scope: 'site',
      subject: site.creds.site_id,
      metric: 'ai_tokens',
      period: 'month',
      limit: LIMIT,
    });
    provider.setDefault({ kind: 'slow', delay_ms: 200 });
    const clients = [site, new SiteClient(b.gateway, site.creds)];
    const results = await Promise.all(Array.from({ length: 12 }, (_, i) => clients[i % 2]!.post('ai/generate', req)));
    const ok = results.filter((r) => r.status === 200);
    expect(ok.length).toBeGreaterThan(0);
    expect(results.filter((r) => r.status === 429).length).toBe(12 - ok.length);
    const db = new pg.Client({ connectionString: url });
    await db.connect();
    const counter = (
      await db.query(
        `SELECT used::int, reserved::int FROM usage_counters WHERE scope = 'site' AND subject = $1 AND metric = 'ai_tokens' AND period = 'month'`,
        [site.creds.site_id],
      )
    ).rows[0];
    const events = (
      await db.query(
        `SELECT count(*)::int AS n, sum(tokens_input + tokens_output)::int AS tokens FROM usage_events WHERE site_id = $1 AND event = 'ai.generation.completed'`,
        [site.creds.site_id],
      )
    ).rows[0];
    await db.end();
    expect(counter.reserved).toBe(0);
    expect(counter.used).toBeLessThanOrEqual(LIMIT);
    expect(events.n).toBe(ok.length);
    expect(events.tokens).toBe(counter.used);
  });

  it('a nonce is accepted once across instances, and a disconnect on one stops the key on the other', async () => {
    const site = await register(a.gateway);
    const onB = new SiteClient(b.gateway, site.creds);
    const nonce = 'c2hhcmVkLW5vbmNlLTEyMw';
    const [r1, r2] = await Promise.all([site.get('sites/status', { nonce }), onB.get('sites/status', { nonce })]);
    expect([r1.status, r2.status].sort()).toEqual([200, 401]);
    await site.post('sites/disconnect');
    expect((await onB.get('sites/status')).body.error.code).toBe('invalid_site');
  });
});

async function pgIds(url: string, siteId: string): Promise<string[]> {
  const db = new pg.Client({ connectionString: url });
  await db.connect();
  const r = await db.query('SELECT event_id FROM usage_events WHERE site_id = $1', [siteId]);
  await db.end();
  return r.rows.map((x) => x.event_id as string);
}
