import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CloudStatusView } from '../../main/contract/cloud-actions.ts';
import { HealthReport } from '../../main/contract/health.ts';
import { startWireWorld, type WireWorld } from './helpers/wire-world.ts';

/**
 * Spec "cloud request flow" step 2: the local caller is verified before any
 * cloud request. Every request the service sends to the gateway goes through
 * a counting proxy; callers that may not reach the cloud must leave the count
 * where it was. Then translate_page through ai/generate with a fixture
 * provider behind the gateway: one generation per translated field, each
 * counted once on the gateway, never queued a second time by the service.
 */
let w: WireWorld;
let siteId: string;
let adminToken: string;
let readerToken: string;
let narrowToken: string;
let cookie: string;

type ToolAnswer = {
  isError?: boolean;
  content: Array<{ type: string; text?: string }>;
  structuredContent?: Record<string, unknown>;
};
const text = (r: ToolAnswer) => r.content.map((c) => c.text ?? '').join('');
const codeOf = (r: ToolAnswer) =>
  r.isError
    ? (/\b(entitlement_required|provider_unavailable|quota_exceeded|forbidden|not_found|upstream_error|unknown_tool|product_inactive)\b/.exec(
        text(r),
      )?.[1] ?? text(r))
    : null;

beforeAll(async () => {
  w = await startWireWorld({ ai: true });
  const c = await w.admin<{ site_id: string }>('POST', 'cloud/connect', { url: w.proxy.url });
  siteId = c.body.data!.site_id;
  const lic = await w.h.op<{ license_key: string; account_id: string }>('licenses.create', { plan: 'pro' });
  await w.h.op('accounts.policy.set', {
    account: lic.account_id,
    ai_allowed_providers: ['fixture'],
    ai_fallback_order: ['fixture'],
  });
  expect((await w.admin('POST', 'cloud/activate', { license_key: lic.license_key })).status).toBe(200);
  adminToken = (await w.svc.createToken({ label: 'admin agent', user: 'admin' })).token;
  await w.svc.dispatch('users.add', { login: 'reader', role: 'subscriber' });
  readerToken = (await w.svc.createToken({ label: 'reader agent', user: 'reader' })).token;
  narrowToken = (await w.svc.createToken({ label: 'narrow', scope: { tools: ['pages_list'] } })).token;
  const login = await fetch(w.svc.loginUrl(), { redirect: 'manual' });
  cookie = login.headers.get('set-cookie')!.split(';')[0]!;
}, 120_000);
afterAll(async () => w?.stop());

describe('the caller is verified before any cloud request', () => {
  it('refused callers cause no request at all (counted at the proxy)', async () => {
    const admin = (path: string, headers: Record<string, string>, method = 'POST') =>
      fetch(`${w.svc.adminUrl}/${path}`, {
        method,
        headers: { 'Content-Type': 'application/json', ...headers },
        body: method === 'POST' ? '{}' : undefined,
      });
    const rest = (path: string, headers: Record<string, string>, method = 'POST') =>
      fetch(`${w.svc.baseUrl}/wp-json/gatehouse/v1/${path}`, {
        method,
        headers: { 'Content-Type': 'application/json', ...headers },
        body: method === 'POST' ? '{}' : undefined,
      });
    const before = w.proxy.count();
    const statuses = [
      // nobody
      (await admin('cloud/sync', {})).status,
      (await rest('pro/cloud/sync', {})).status,
      (await rest('pro/license', {}, 'GET')).status,
      // an MCP token, even an administrator's, never reaches the admin API nor a POST of pro/*
      (await admin('cloud/sync', { Authorization: `Bearer ${adminToken}` })).status,
      (await admin('cloud/usage', { Authorization: `Bearer ${adminToken}` }, 'GET')).status,
      (await admin('updates/check', { Authorization: `Bearer ${adminToken}` })).status,
      (await rest('pro/cloud/sync', { Authorization: `Bearer ${adminToken}` })).status,
      (await rest('pro/license/deactivate', { Authorization: `Bearer ${adminToken}` })).status,
      // a token whose user lacks manage_options, or one narrowed to some tools, reads no pro/*
      (await rest('pro/license', { Authorization: `Bearer ${readerToken}` }, 'GET')).status,
      (await rest('pro/usage', { Authorization: `Bearer ${narrowToken}` }, 'GET')).status,
      // a console session without the CSRF header, or from another origin
      (await admin('cloud/sync', { Cookie: cookie })).status,
      (await admin('cloud/sync', { Cookie: cookie, 'X-Gatehouse-CSRF': '1', Origin: 'https://evil.example' })).status,
      // a wrong admin key
      (await admin('cloud/sync', { Authorization: 'Bearer gha_wrong' })).status,
    ];
    for (const s of statuses) expect([401, 403]).toContain(s);
    // an MCP call whose token's user lacks the tool's capability (use_ai): refused before the AI is asked
    const reader = await w.mcp(readerToken);
    // the tool is hidden from a user without use_ai: the call is refused as an unknown tool
    await expect(
      reader.callTool({ name: 'translate_page', arguments: { id: 1, target_language: 'de' } }),
    ).rejects.toThrow(/unknown tool/);
    await reader.close();
    expect(w.proxy.count()).toBe(before);
    expect(w.ai!.count).toBe(0);
  });

  it('allowed callers do reach the gateway: a console session with CSRF, the admin key, a manage_options token reading pro/*', async () => {
    let before = w.proxy.count();
    const s = await fetch(`${w.svc.adminUrl}/cloud/sync`, {
      method: 'POST',
      headers: { Cookie: cookie, 'X-Gatehouse-CSRF': '1', Origin: w.svc.baseUrl, 'Content-Type': 'application/json' },
      body: '{}',
    });
    expect(s.status).toBe(200);
    expect(w.proxy.count()).toBeGreaterThan(before);
    before = w.proxy.count();
    expect((await w.admin('POST', 'cloud/sync', {})).status).toBe(200);
    expect(w.proxy.count()).toBeGreaterThan(before);
    // GET pro/* for a manage_options token answers from the verified state: allowed, and no request needed
    before = w.proxy.count();
    const lic = await w.rest<{ license: { plan: string } }>('GET', 'pro/license', { token: adminToken });
    expect(lic.status).toBe(200);
    expect(lic.body.license.plan).toBe('pro');
    expect(w.proxy.count()).toBe(before);
  });
});

describe('translate_page through the cloud', () => {
  it('translates with the fixture provider behind ai/generate; each generation is counted once, on the gateway only', async () => {
    const client = await w.mcp(adminToken);
    const list = (await client.callTool({ name: 'pages_list', arguments: {} })) as ToolAnswer;
    const id = (list.structuredContent as { pages: Array<{ id: number; language: string }> }).pages.find(
      (p) => p.language === 'en',
    )!.id;
    expect(id).toBeGreaterThan(0);
    const sc = CloudStatusView.parse((await w.admin('GET', 'cloud/status')).body.data).outbox;
    // Local counts are read after a flush: StatsRecorder.snapshot() misses a batch while its flush is being written (seen, left to its owner).
    await w.svc.core.stats.flush();
    const localBefore = w.svc.core.stats.snapshot().usage['ai.generation.completed']?.['verto.translate']?.events ?? 0;
    const generateBefore = w.proxy.count('ai/generate');
    const r = (await client.callTool({
      name: 'translate_page',
      arguments: { id, target_language: 'fr' },
    })) as ToolAnswer;
    expect(r.isError ?? false, text(r)).toBe(false);
    const generations = w.proxy.count('ai/generate') - generateBefore;
    expect(generations).toBeGreaterThan(0);
    expect(w.ai!.count).toBe(generations);
    await w.admin('POST', 'cloud/sync', {});
    // the gateway recorded each generation itself, once; the service counted them locally and queued none
    expect(await w.storedEvents(siteId, 'ai.generation.completed')).toBe(generations);
    const after = CloudStatusView.parse((await w.admin('GET', 'cloud/status')).body.data).outbox;
    expect(after.cloud_recorded - sc.cloud_recorded).toBe(generations);
    await w.svc.core.stats.flush();
    expect(
      (w.svc.core.stats.snapshot().usage['ai.generation.completed']?.['verto.translate']?.events ?? 0) - localBefore,
    ).toBe(generations);
    // the call itself is one MCP action on the gateway, and the translation one event with its characters (translation_characters)
    expect(await w.storedEvents(siteId, 'mcp.tool.called')).toBe(2);
    expect(await w.storedEvents(siteId, 'translation.page.translated')).toBe(1);
    await client.close();
  });

  it('a quota refusal reaches the agent with scope and reset time, and the console as a warning', async () => {
    await w.h.op('limits.set', { scope: 'site', subject: siteId, metric: 'ai_tokens', period: 'day', limit: 1 });
    const client = await w.mcp(adminToken);
    const list = (await client.callTool({ name: 'pages_list', arguments: {} })) as ToolAnswer;
    const id = (list.structuredContent as { pages: Array<{ id: number; language: string }> }).pages.find(
      (p) => p.language === 'en',
    )!.id;
    const r = (await client.callTool({
      name: 'translate_page',
      arguments: { id, target_language: 'es' },
    })) as ToolAnswer;
    expect(codeOf(r)).toBe('quota_exceeded');
    // the agent reads the scope and the reset time
    expect(text(r)).toMatch(/ of the site\b/);
    expect(text(r)).toMatch(/resets at \d{4}-\d\d-\d\dT/);
    await client.close();
    const h = HealthReport.parse((await w.admin('GET', 'health')).body.data);
    expect(h.warnings.map((x) => x.code)).toContain('cloud_quota_exceeded');
  });
});
