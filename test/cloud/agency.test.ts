import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { uuidv7 } from '../../main/lib/ids.ts';
import { pruneFinished } from '../../cloud/repo/tasks-repo.ts';
import { rawRequest, register, type SiteClient } from './helpers/client.ts';
import { startHarness, type Harness } from './helpers/cloud-harness.ts';

/**
 * The agency views (agency/sites, usage, entitlements, reports) through an
 * account API key, against the real service: each account sees its own
 * sites only, a site signature is not an account credential, and reports
 * are cloud tasks with JSON and formula-safe CSV results.
 */
let h: Harness;
interface Account {
  id: string;
  key: string;
  sites: SiteClient[];
}
let a: Account;
let b: Account;

async function account(plan: string, n: number, names: string[] = []): Promise<Account> {
  const lic = await h.op<{ license_key: string; account_id: string }>('licenses.create', { plan });
  const sites: SiteClient[] = [];
  for (let i = 0; i < n; i++) {
    const s = await register(h.gateway, 'production', `https://site${i}.${plan}.example`);
    expect((await s.post('license/activate', { license_key: lic.license_key })).status).toBe(200);
    if (names[i]) await h.svc.ctx.db.query('UPDATE sites SET name = $2 WHERE id = $1', [s.creds.site_id, names[i]]);
    sites.push(s);
  }
  const key = await h.op<{ account_key: string }>('accounts.keys.create', { account: lic.account_id, label: 'tests' });
  return { id: lic.account_id, key: key.account_key, sites };
}

const as = (
  acc: { key: string },
  path: string,
  o: { method?: string; body?: unknown; headers?: Record<string, string> } = {},
) =>
  rawRequest(
    `${h.gateway}/${path}`,
    o.method ?? 'GET',
    { Authorization: `Bearer ${acc.key}`, ...o.headers },
    o.body === undefined ? undefined : JSON.stringify(o.body),
  );

const event = (site: SiteClient, units: number, over: Record<string, unknown> = {}) => ({
  event_id: uuidv7(),
  event: 'mcp.tool.called',
  site_id: site.creds.site_id,
  product: 'mcp',
  feature: 'mcp.core',
  units,
  timestamp: new Date().toISOString(),
  ...over,
});

async function waitDone(acc: Account, id: string) {
  for (let i = 0; i < 200; i++) {
    const r = await as(acc, `agency/reports/${id}`);
    if (r.body.task.status === 'done' || r.body.task.status === 'failed') return r;
    await new Promise((res) => setTimeout(res, 50));
  }
  throw new Error('report did not finish');
}

beforeAll(async () => {
  h = await startHarness();
  a = await account('agency', 3, ['=HYPERLINK("http://evil.example","click")', 'Shop, "main"', '+1 site']);
  b = await account('agency', 1);
  await a.sites[0]!.post('usage/record', {
    events: [
      event(a.sites[0]!, 5),
      event(a.sites[0]!, 2, { product: 'aeo', feature: 'seo.analyze', event: 'indexing.page.queued' }),
    ],
  });
  await a.sites[1]!.post('usage/record', event(a.sites[1]!, 7));
  await b.sites[0]!.post('usage/record', event(b.sites[0]!, 100));
}, 180_000);
afterAll(() => h?.stop());

describe('who may see agency views', () => {
  it('needs the account key: none is 401 with a challenge, a site signature is 403, a revoked key is 401', async () => {
    const none = await rawRequest(`${h.gateway}/agency/sites`, 'GET', {});
    expect(none.status).toBe(401);
    expect(none.body.error).toMatchObject({ code: 'unauthorized', retryable: false });
    expect(none.headers['www-authenticate']).toMatch(/^Bearer /);
    const signed = await a.sites[0]!.get('agency/sites');
    expect(signed.status).toBe(403);
    expect(signed.body.error.code).toBe('forbidden');
    expect((await as({ key: 'gha_' + 'x'.repeat(43) }, 'agency/sites')).status).toBe(401);
    const extra = await h.op<{ id: string; account_key: string }>('accounts.keys.create', { account: a.id });
    expect((await as({ key: extra.account_key }, 'agency/sites')).status).toBe(200);
    await h.op('accounts.keys.revoke', { id: extra.id });
    expect((await as({ key: extra.account_key }, 'agency/sites')).status).toBe(401);
  });

  it("needs a plan with agency views, and names the account's plan and support priority", async () => {
    const pro = await account('pro', 1);
    const r = await as(pro, 'agency/sites');
    expect(r.status).toBe(403);
    expect(r.body.error).toMatchObject({ code: 'entitlement_required', required_plan: 'agency' });
    const ok = await as(a, 'agency/sites');
    expect(ok.body.account).toEqual({ id: a.id, name: expect.any(String), plan: 'agency', support_priority: 'p2' });
    expect(ok.headers['gatehouse-plan']).toBe('agency');
    expect(ok.headers['gatehouse-support-priority']).toBe('p2');
  });
});

describe('agency/sites', () => {
  it("lists the account's own sites with status, version, last sync and outbox depth; never another account's", async () => {
    await a.sites[0]!.post('sites/sync', { version: '1.2.3', products_in_use: ['mcp'], outbox_depth: 4 });
    const r = await as(a, 'agency/sites');
    expect(r.status).toBe(200);
    expect(r.body.sites.map((s: { site_id: string }) => s.site_id)).toEqual(a.sites.map((s) => s.creds.site_id));
    expect(r.body.sites[0]).toMatchObject({
      environment: 'production',
      status: 'active',
      version: '1.2.3',
      outbox_depth: 4,
      last_sync_at: expect.any(String),
      license: { status: 'active', plan: 'agency' },
    });
    const other = await as(b, 'agency/sites');
    expect(other.body.sites.map((s: { site_id: string }) => s.site_id)).toEqual([b.sites[0]!.creds.site_id]);
    const page = await as(a, 'agency/sites?limit=2');
    expect(page.body.sites).toHaveLength(2);
    const rest = await as(a, `agency/sites?limit=2&cursor=${page.body.next_cursor}`);
    expect(rest.body.sites).toHaveLength(1);
    expect(rest.body.next_cursor).toBeNull();
  });
});

describe('agency/usage', () => {
  it('rolls usage up per site, product, metric and period, for the own account only', async () => {
    const r = await as(a, 'agency/usage?period=month');
    expect(r.status).toBe(200);
    const items = r.body.items
      .map((i: Record<string, unknown>) => `${i.site_id}|${i.product}|${i.metric}|${i.amount}`)
      .sort();
    expect(items).toEqual(
      [
        `${a.sites[0]!.creds.site_id}|mcp|mcp_actions|5`,
        `${a.sites[0]!.creds.site_id}|aeo|indexing_requests|2`,
        `${a.sites[1]!.creds.site_id}|mcp|mcp_actions|7`,
      ].sort(),
    );
    expect(JSON.stringify(r.body)).not.toContain(b.sites[0]!.creds.site_id);
    const filtered = await as(a, `agency/usage?metric=indexing_requests`);
    expect(filtered.body.items).toHaveLength(1);
    const foreign = await as(a, `agency/usage?site=${b.sites[0]!.creds.site_id}`);
    expect(foreign.body.items).toEqual([]);
    expect((await as(a, 'agency/usage?period=day&from=2020-01-01T00:00:00Z&to=2021-01-01T00:00:00Z')).status).toBe(400);
  });
});

describe('agency/entitlements', () => {
  it('answers the matrix site x feature, with product switches applied', async () => {
    await h.op('products.disable', { product: 'verto', site: a.sites[2]!.creds.site_id });
    const r = await as(a, 'agency/entitlements');
    expect(r.status).toBe(200);
    expect(r.body.features).toContain('verto.translate');
    const row = (i: number) => r.body.sites.find((s: { site_id: string }) => s.site_id === a.sites[i]!.creds.site_id);
    expect(row(0).allowed['verto.translate']).toBe(true);
    expect(row(2).allowed['verto.translate']).toBe(false);
    expect(row(0).allowed['enterprise.controls']).toBe(false);
    expect(r.body.sites).toHaveLength(3);
  });
});

describe('agency/reports', () => {
  it('generates a report as a task: id and status at once, then JSON and formula-safe CSV', async () => {
    const created = await as(a, 'agency/reports', { method: 'POST', body: { period: 'month' } });
    expect(created.status).toBe(202);
    expect(created.body.task).toMatchObject({
      id: expect.stringMatching(/^task_/),
      kind: 'usage',
      status: expect.stringMatching(/queued|running|done/),
    });
    const done = await waitDone(a, created.body.task.id);
    expect(done.body.task).toMatchObject({ status: 'done', rows: 3, error: null });
    expect(done.body.report.totals).toEqual({ mcp_actions: 12, indexing_requests: 2 });
    expect(done.body.report.sites).toHaveLength(3);
    expect(done.body.report.sites[0].totals).toEqual({ mcp_actions: 5, indexing_requests: 2 });

    const csv = await as(a, `agency/reports/${created.body.task.id}/csv`);
    expect(csv.status).toBe(200);
    expect(csv.headers['content-type']).toMatch(/^text\/csv/);
    const text = csv.body as string;
    expect(text.split('\r\n')[0]).toBe(
      'site_id,site_name,site_url,environment,site_status,plan,license_status,product,metric,period_start,amount,events',
    );
    expect(text).toContain(`"'=HYPERLINK(""http://evil.example"",""click"")"`);
    expect(text).not.toMatch(/(^|,)=HYPERLINK/m);
    expect(text).not.toContain(b.sites[0]!.creds.site_id);

    const list = await as(a, 'agency/reports');
    expect(list.body.tasks.map((t: { id: string }) => t.id)).toContain(created.body.task.id);
  });

  it("keeps one account's reports from another", async () => {
    const created = await as(a, 'agency/reports', { method: 'POST', body: {} });
    await waitDone(a, created.body.task.id);
    for (const path of [`agency/reports/${created.body.task.id}`, `agency/reports/${created.body.task.id}/csv`]) {
      const r = await as(b, path);
      expect(r.status).toBe(404);
      expect(r.body.error.code).toBe('not_found');
    }
    expect((await as(b, 'agency/reports')).body.tasks.map((t: { id: string }) => t.id)).not.toContain(
      created.body.task.id,
    );
  });

  it('keeps a bounded number of finished reports per account', async () => {
    const before = (await as(a, 'agency/reports')).body.tasks.length;
    expect(before).toBeGreaterThanOrEqual(2);
    expect(await pruneFinished(h.svc.ctx.db, a.id, 1)).toBe(before - 1);
    expect((await as(a, 'agency/reports')).body.tasks).toHaveLength(1);
    expect((await as(b, 'agency/reports')).status).toBe(200);
  });

  it('refuses a bad report request with 400', async () => {
    expect((await as(a, 'agency/reports', { method: 'POST', body: { kind: 'everything' } })).status).toBe(400);
    expect(
      (
        await as(a, 'agency/reports', {
          method: 'POST',
          body: { from: '2026-02-01T00:00:00Z', to: '2026-01-01T00:00:00Z' },
        })
      ).status,
    ).toBe(400);
  });
});
