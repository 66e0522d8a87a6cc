import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { uuidv7 } from '../../main/lib/ids.ts';
import { rawRequest, type SiteClient } from './helpers/client.ts';
import { startHarness, type Harness } from './helpers/cloud-harness.ts';
import { accountWithSites } from './helpers/accounts.ts';

/**
 * Enterprise controls through the account's API key, against the real
 * service: features switched off for every site at once, limits the account
 * sets on its department, site and project scopes (adding to the plan's,
 * never lifting them), plan and support priority on every answer to its
 * sites, and the request log export with filters, without secrets, and
 * without another account's requests.
 */
let h: Harness;
let ent: { id: string; key: string; license: string; sites: SiteClient[] };
let other: { id: string; key: string; sites: SiteClient[] };

const as = (key: string, path: string, o: { method?: string; body?: unknown } = {}) =>
  rawRequest(
    `${h.gateway}/${path}`,
    o.method ?? 'GET',
    { Authorization: `Bearer ${key}` },
    o.body === undefined ? undefined : JSON.stringify(o.body),
  );
const mcp = (s: SiteClient, units = 1) => ({
  event_id: uuidv7(),
  event: 'mcp.tool.called',
  site_id: s.creds.site_id,
  product: 'mcp',
  feature: 'mcp.core',
  units,
  timestamp: new Date().toISOString(),
});

const account = (plan: string, n: number) => accountWithSites(h, plan, n);

beforeAll(async () => {
  h = await startHarness();
  ent = await account('enterprise', 3);
  other = await account('enterprise', 1);
  await h.op('sites.assign', { id: ent.sites[0]!.creds.site_id, department: 'sales' });
  await h.op('sites.assign', { id: ent.sites[1]!.creds.site_id, department: 'sales' });
}, 180_000);
afterAll(() => h?.stop());

describe('plan and support priority', () => {
  it("are named on every answer to the account's sites, errors included; the vendor can raise the account's priority", async () => {
    const ok = await ent.sites[0]!.get('sites/status');
    expect(ok.headers['gatehouse-plan']).toBe('enterprise');
    expect(ok.headers['gatehouse-support-priority']).toBe('p1');
    expect(ok.body.site.support_priority).toBe('p1');
    const refused = await ent.sites[0]!.post('entitlements/check', { feature: 'nope.nothing' });
    expect(refused.status).toBe(400);
    expect(refused.headers['gatehouse-support-priority']).toBe('p1');
    await h.op('accounts.policy.set', { account: ent.id, support_priority: 'p0' });
    expect(
      (await ent.sites[1]!.post('entitlements/check', { feature: 'mcp.core' })).headers['gatehouse-support-priority'],
    ).toBe('p0');
    expect((await as(ent.key, 'enterprise/policy')).body.account.support_priority).toBe('p0');
    await h.op('accounts.policy.set', { account: ent.id, support_priority: null });
    expect((await ent.sites[1]!.get('sites/status')).headers['gatehouse-support-priority']).toBe('p1');
  });
});

describe('enterprise/policy', () => {
  it("switches a feature off for every site of the account at once, and only that account's", async () => {
    const set = await as(ent.key, 'enterprise/policy', {
      method: 'POST',
      body: { features_off: ['verto.translate'], ai: { allowed_providers: ['primary-eu'], required_tags: ['eu'] } },
    });
    expect(set.status).toBe(200);
    expect(set.body.policy).toMatchObject({
      features_off: ['verto.translate'],
      ai: { allowed_providers: ['primary-eu'], required_tags: ['eu'], fallback_order: [] },
    });
    for (const s of ent.sites) {
      const r = await s.post('entitlements/check', { feature: 'verto.translate' });
      expect(r.status).toBe(403);
      expect(r.body.error).toMatchObject({ code: 'entitlement_required', required_plan: null, switched_off: true });
      const all = await s.get('entitlements');
      expect(all.body.entitlements.find((e: { feature: string }) => e.feature === 'verto.translate').allowed).toBe(
        false,
      );
    }
    expect((await other.sites[0]!.post('entitlements/check', { feature: 'verto.translate' })).status).toBe(200);
    // The policy's other fields stay when one is changed.
    const again = await as(ent.key, 'enterprise/policy', { method: 'POST', body: { features_off: [] } });
    expect(again.body.policy).toMatchObject({ features_off: [], ai: { allowed_providers: ['primary-eu'] } });
    expect((await ent.sites[0]!.post('entitlements/check', { feature: 'verto.translate' })).status).toBe(200);
  });

  it('refuses unknown features, unknown fields and a plan without enterprise controls', async () => {
    expect(
      (await as(ent.key, 'enterprise/policy', { method: 'POST', body: { features_off: ['made.up'] } })).status,
    ).toBe(400);
    expect((await as(ent.key, 'enterprise/policy', { method: 'POST', body: { support_priority: 'p0' } })).status).toBe(
      400,
    );
    const agency = await account('agency', 0);
    const r = await as(agency.key, 'enterprise/policy');
    expect(r.status).toBe(403);
    expect(r.body.error).toMatchObject({ code: 'entitlement_required', required_plan: 'enterprise' });
  });
});

describe('enterprise/limits', () => {
  it('limits a department across its sites; the tighter of two limits holds; never another account', async () => {
    const r = await as(ent.key, 'enterprise/limits', {
      method: 'POST',
      body: { scope: 'department', subject: 'sales', metric: 'mcp_actions', period: 'day', limit: 5 },
    });
    expect(r.status).toBe(200);
    expect(r.body.policy.limits).toContainEqual({
      scope: 'department',
      subject: `${ent.id}/sales`,
      metric: 'mcp_actions',
      period: 'day',
      limit: 5,
      set_by: 'account',
    });
    expect((await ent.sites[0]!.post('usage/record', mcp(ent.sites[0]!, 3))).status).toBe(200);
    const over = await ent.sites[1]!.post('usage/record', mcp(ent.sites[1]!, 3));
    expect(over.status).toBe(429);
    expect(over.body.error).toMatchObject({
      code: 'quota_exceeded',
      scope: 'department',
      subject: `${ent.id}/sales`,
      limit: 5,
      used: 3,
    });
    // The third site is not in sales.
    expect((await ent.sites[2]!.post('usage/record', mcp(ent.sites[2]!, 3))).status).toBe(200);

    // A vendor limit of 100 on a site, and the account's own 2: the account's holds.
    const s2 = ent.sites[2]!.creds.site_id;
    await h.op('limits.set', { scope: 'site', subject: s2, metric: 'mcp_actions', period: 'day', limit: 100 });
    expect(
      (
        await as(ent.key, 'enterprise/limits', {
          method: 'POST',
          body: { scope: 'site', subject: s2, metric: 'mcp_actions', period: 'day', limit: 4 },
        })
      ).status,
    ).toBe(200);
    expect((await ent.sites[2]!.post('usage/record', mcp(ent.sites[2]!, 2))).status).toBe(429);
    const limits = (await ent.sites[2]!.get('usage/limits')).body.limits.filter(
      (l: { scope: string; metric: string; period: string }) =>
        l.scope === 'site' && l.metric === 'mcp_actions' && l.period === 'day',
    );
    expect(limits.map((l: { source: string; limit: number }) => `${l.source}:${l.limit}`).sort()).toEqual([
      'account:4',
      'operator:100',
    ]);

    // Another account's site, or a department name with a slash, is refused.
    expect(
      (
        await as(ent.key, 'enterprise/limits', {
          method: 'POST',
          body: {
            scope: 'site',
            subject: other.sites[0]!.creds.site_id,
            metric: 'mcp_actions',
            period: 'day',
            limit: 1,
          },
        })
      ).status,
    ).toBe(404);
    expect(
      (
        await as(ent.key, 'enterprise/limits', {
          method: 'POST',
          body: { scope: 'project', subject: 'x/y', metric: 'mcp_actions', period: 'day', limit: 1 },
        })
      ).status,
    ).toBe(400);
    expect((await other.sites[0]!.post('usage/record', mcp(other.sites[0]!, 50))).status).toBe(200);
    // Removing the account's limit leaves the vendor's.
    await as(ent.key, 'enterprise/limits', {
      method: 'POST',
      body: { scope: 'site', subject: s2, metric: 'mcp_actions', period: 'day', limit: null },
    });
    expect((await ent.sites[2]!.post('usage/record', mcp(ent.sites[2]!, 2))).status).toBe(200);
  });
});

describe('enterprise/logs', () => {
  it("exports the account's requests as JSONL and CSV, filtered, with no secret in them", async () => {
    await ent.sites[0]!.post('entitlements/check', { feature: 'mcp.core' });
    await ent.sites[0]!.post('entitlements/check', { feature: 'bad.feature.key' });
    await other.sites[0]!.post('entitlements/check', { feature: 'mcp.core' });
    const r = await as(ent.key, 'enterprise/logs');
    expect(r.status).toBe(200);
    expect(r.headers['content-type']).toMatch(/^application\/x-ndjson/);
    const rows = (r.body as string)
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l));
    expect(rows.length).toBeGreaterThan(5);
    expect(Object.keys(rows[0])).toEqual([
      'at',
      'request_id',
      'site_id',
      'auth',
      'endpoint',
      'method',
      'status',
      'code',
      'ms',
    ]);
    const mine = new Set(ent.sites.map((s) => s.creds.site_id));
    for (const row of rows) expect(row.site_id === null || mine.has(row.site_id)).toBe(true);
    expect(
      rows.some((x) => x.endpoint === 'entitlements/check' && x.status === 400 && x.code === 'invalid_request'),
    ).toBe(true);
    expect(rows.some((x) => x.endpoint === 'enterprise/policy' && x.auth === 'account')).toBe(true);

    const text = r.body as string;
    for (const secret of [ent.key, ent.license, ent.sites[0]!.creds.secret, other.sites[0]!.creds.site_id])
      expect(text).not.toContain(secret);

    const refused = await as(
      ent.key,
      `enterprise/logs?status=4xx&endpoint=entitlements/check&site=${ent.sites[0]!.creds.site_id}`,
    );
    const only = (refused.body as string)
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l));
    expect(only.length).toBeGreaterThan(0);
    for (const x of only) {
      expect(x).toMatchObject({ endpoint: 'entitlements/check', site_id: ent.sites[0]!.creds.site_id });
      expect(x.status >= 400 && x.status < 500).toBe(true);
    }
    expect(only.some((x) => x.status === 400) && only.some((x) => x.status === 403)).toBe(true);

    const csv = await as(ent.key, 'enterprise/logs?format=csv&limit=2');
    expect(csv.headers['content-type']).toMatch(/^text\/csv/);
    expect((csv.body as string).split('\r\n')[0]).toBe('at,request_id,site_id,auth,endpoint,method,status,code,ms');
    expect((csv.body as string).trim().split('\r\n')).toHaveLength(3);
    const next = csv.headers['gatehouse-next-cursor'] as string;
    expect(next).toBeTruthy();
    const page2 = await as(ent.key, `enterprise/logs?format=csv&limit=2&cursor=${next}`);
    expect((page2.body as string).split('\r\n')[1]).not.toBe((csv.body as string).split('\r\n')[1]);

    const theirs = await as(other.key, 'enterprise/logs');
    for (const s of mine) expect(theirs.body as string).not.toContain(s);
    expect((await as(ent.key, 'enterprise/logs?from=yesterday')).status).toBe(400);
    const future = encodeURIComponent(new Date(Date.now() + 86_400_000).toISOString());
    expect((await as(ent.key, `enterprise/logs?from=${future}`)).body).toBe('');
    const window = await as(
      ent.key,
      `enterprise/logs?from=${encodeURIComponent(new Date(Date.now() - 3_600_000).toISOString())}&to=${future}`,
    );
    const inWindow = (window.body as string)
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l));
    expect(inWindow.length).toBeGreaterThan(rows.length);
    expect(inWindow[0].request_id).toBe(rows[0].request_id);
    const past = encodeURIComponent(new Date(Date.now() - 86_400_000).toISOString());
    expect((await as(ent.key, `enterprise/logs?to=${past}`)).body).toBe('');
  });
});
