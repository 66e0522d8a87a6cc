import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CloudStatusView, CloudUsageView } from '../../main/contract/cloud-actions.ts';
import { HealthReport } from '../../main/contract/health.ts';
import { startWireWorld, type WireWorld } from './helpers/wire-world.ts';
import { DAY, MovableClock } from '../cloud-client/helpers/world.ts';

/**
 * The service wired to the real reference cloud gateway: the connect flow
 * through the admin API (as the CLI and the console call it) and the local
 * REST, the pipeline's gates following the certificate, usage counted on the
 * gateway exactly equal to the MCP calls made, and the health report.
 */
let w: WireWorld;
let siteId: string;
let license: { id: string; license_key: string };
let agentToken: string;
const clock = new MovableClock();

beforeAll(async () => {
  // the cloud client's clock only: the certificate's expiry is what is tested, not the service's rate limits
  w = await startWireWorld({ cloudClock: clock });
  agentToken = (await w.svc.createToken({ label: 'agent' })).token;
}, 120_000);
afterAll(async () => w?.stop());

type ToolAnswer = {
  isError?: boolean;
  content: Array<{ type: string; text?: string }>;
  structuredContent?: Record<string, unknown>;
};
const errorCode = (r: ToolAnswer): string | null => {
  if (!r.isError) return null;
  const text = r.content.map((c) => c.text ?? '').join('');
  const sc = r.structuredContent as { error?: { code?: string } } | undefined;
  return sc?.error?.code ?? /"code":\s*"([a-z_]+)"/.exec(text)?.[1] ?? /\b([a-z]+_[a-z_]+)\b/.exec(text)?.[1] ?? text;
};

describe('connect flow through the service', () => {
  it('unconnected: the health report and pro/cloud/status say so, and cloud.status answers without a request', async () => {
    const before = w.proxy.count();
    const st = await w.admin<CloudStatusView>('GET', 'cloud/status');
    expect(st.status).toBe(200);
    expect(CloudStatusView.parse(st.body.data).connected).toBe(false);
    const pro = await w.rest<{ gateway: { connected: boolean; license: string } }>('GET', 'pro/cloud/status');
    expect(pro.body.gateway).toMatchObject({ connected: false });
    const h = HealthReport.parse((await w.admin('GET', 'health')).body.data);
    expect(h.cloud.gateway.connected).toBe(false);
    expect(w.proxy.count()).toBe(before);
  });

  it('connect, activate: health and pro/* report the site, the license and the products', async () => {
    const c = await w.admin<{ site_id: string; pinned_key: { fingerprint: string }; first_sync: { ok: boolean } }>(
      'POST',
      'cloud/connect',
      { url: w.proxy.url },
    );
    expect(c.status).toBe(200);
    expect(c.body.data!.first_sync).toEqual({ ok: true });
    siteId = c.body.data!.site_id;
    // a second connect is a conflict, and nothing changes
    expect((await w.admin('POST', 'cloud/connect', { url: w.proxy.url })).body).toMatchObject({
      ok: false,
      code: 'conflict',
    });

    license = await w.h.op('licenses.create', { plan: 'pro' });
    const bad = await w.admin('POST', 'cloud/activate', { license_key: 'nope-secret-value' });
    expect(bad.status).toBe(400);
    expect(JSON.stringify(bad.body)).not.toContain('nope-secret-value');
    const a = await w.admin<{ license: { status: string; plan: string; key_preview: string } }>(
      'POST',
      'cloud/activate',
      { license_key: license.license_key },
    );
    expect(a.body.data!.license).toMatchObject({ status: 'active', plan: 'pro' });
    expect(JSON.stringify(a.body)).not.toContain(license.license_key);

    const h = HealthReport.parse((await w.admin('GET', 'health')).body.data);
    expect(h.cloud.gateway.connected).toBe(true);
    expect(h.cloud.gateway.license).toBe('active');
    const st = CloudStatusView.parse((await w.admin('GET', 'cloud/status')).body.data);
    expect(st).toMatchObject({
      connected: true,
      site_id: siteId,
      certificate: { usable: true, license: { plan: 'pro' } },
    });
    const lic = await w.rest<{ success: boolean; license: { status: string; plan: string; site_bound: boolean } }>(
      'GET',
      'pro/license',
    );
    expect(lic.body).toMatchObject({ success: true, license: { status: 'active', plan: 'pro', site_bound: true } });
    const ent = await w.rest<{ source: string; entitlements: Array<{ feature: string; allowed: boolean }> }>(
      'GET',
      'pro/entitlements',
    );
    expect(ent.body.source).toBe('certificate');
    expect(ent.body.entitlements.find((e) => e.feature === 'verto.translate')?.allowed).toBe(true);
    // the whole exchange never put the key in the service's files' answers
    expect(JSON.stringify(st)).not.toContain(license.license_key);
  });

  it('usage: every MCP tool call is counted on the gateway exactly once, and locally', async () => {
    const client = await w.mcp(agentToken);
    const N = 7;
    for (let i = 0; i < N; i++) {
      const r = (await client.callTool({ name: 'pages_list', arguments: {} })) as ToolAnswer;
      expect(r.isError ?? false).toBe(false);
    }
    await client.close();
    const seen: string[] = [];
    const unsubscribe = w.svc.events.subscribe((e) => seen.push(e.type));
    const sync = await w.admin<{ outbox: { ok: boolean; sent: number; remaining: number }; certificate: string }>(
      'POST',
      'cloud/sync',
      {},
    );
    unsubscribe();
    // the console and the tray reload the cloud state on this event
    expect(seen).toContain('health');
    expect(sync.body.data).toMatchObject({ outbox: { ok: true, remaining: 0 }, certificate: 'accepted' });
    expect(await w.storedEvents(siteId, 'mcp.tool.called')).toBe(N);
    // a second sync sends nothing more
    await w.rest('POST', 'pro/cloud/sync', { body: {} });
    expect(await w.storedEvents(siteId, 'mcp.tool.called')).toBe(N);
    await w.svc.core.stats.flush(); // see caller-and-ai.test.ts: a snapshot during a stats flush misses that batch
    const u = CloudUsageView.parse((await w.admin('GET', 'cloud/usage?days=7')).body.data);
    expect(u.source).toBe('cloud');
    expect(u.summary?.totals.mcp_actions).toBe(N);
    expect(u.local.usage['mcp.tool.called']?.['site.pages.read']?.events).toBeGreaterThanOrEqual(N);
    expect(u.outbox.depth).toBe(0);
    expect(u.outbox.delivered).toBe(N);
  });

  it('entitlements gate a real MCP tool: on with the pro plan; off when the plan drops it, when the product is switched off, when the certificate expires with the clock moved, and when the license is revoked', async () => {
    const client = await w.mcp(agentToken);
    const list = (await client.callTool({ name: 'pages_list', arguments: {} })) as ToolAnswer;
    const id = (list.structuredContent as { pages: Array<{ id: number; language: string }> }).pages.find(
      (p) => p.language === 'en',
    )!.id;
    // granted: the gate passes and the tool asks the gateway's ai/generate (which has no provider configured here, so it refuses);
    // refused: the gate stops the call before any AI request
    const translate = async () => {
      const before = w.proxy.count('ai/generate');
      const code = errorCode(
        (await client.callTool({ name: 'translate_page', arguments: { id, target_language: 'it' } })) as ToolAnswer,
      );
      return { code, asked_ai: w.proxy.count('ai/generate') > before };
    };
    const granted = await translate();
    expect(granted.asked_ai).toBe(true);
    expect(granted.code).not.toBe('entitlement_required');
    const features = ['mcp.upstreams', 'aeo.reports', 'code.assist', 'ai.generate'];
    await w.h.op('plans.set', { id: 'pro', features });
    await w.admin('POST', 'cloud/sync', {});
    expect(await translate()).toEqual({ code: 'entitlement_required', asked_ai: false });
    await w.h.op('plans.set', { id: 'pro', features: [...features, 'verto.translate'] });
    await w.admin('POST', 'cloud/sync', {});
    expect(await translate()).toEqual(granted);
    // the product switched off for this site by the gateway's operator, then on again
    await w.h.op('products.disable', { product: 'verto', site: siteId });
    await w.admin('POST', 'cloud/sync', {});
    expect(await translate()).toEqual({ code: 'product_inactive', asked_ai: false });
    await w.h.op('products.enable', { product: 'verto', site: siteId });
    await w.admin('POST', 'cloud/sync', {});
    expect(await translate()).toEqual(granted);
    // the certificate's grants end with the clock moved 8 days on (no request needed to stop), and come back with the clock and a sync
    clock.skewMs = 8 * DAY;
    expect(await translate()).toEqual({ code: 'entitlement_required', asked_ai: false });
    const st = CloudStatusView.parse((await w.admin('GET', 'cloud/status')).body.data);
    expect(st.certificate?.usable).toBe(false);
    expect(st.warnings.length).toBeGreaterThan(0);
    clock.skewMs = 0;
    await w.admin('POST', 'cloud/sync', {});
    expect(await translate()).toEqual(granted);
    await w.h.op('licenses.revoke', { id: license.id });
    await w.admin('POST', 'cloud/sync', {});
    expect(await translate()).toEqual({ code: 'license_invalid', asked_ai: false });
    // free features keep working all along
    expect(((await client.callTool({ name: 'pages_list', arguments: {} })) as ToolAnswer).isError ?? false).toBe(false);
    await client.close();
  });

  it('disconnect: the gates go back to the free policy and the health report says not connected', async () => {
    const d = await w.admin<{ site_id: string; remote: { ok: boolean } }>('POST', 'cloud/disconnect', {});
    expect(d.body.data).toMatchObject({ site_id: siteId, remote: { ok: true } });
    const h = HealthReport.parse((await w.admin('GET', 'health')).body.data);
    expect(h.cloud.gateway.connected).toBe(false);
    const ent = await w.rest<{ source: string }>('GET', 'pro/entitlements');
    expect(ent.body.source).toBe('local-policy');
  });
});
