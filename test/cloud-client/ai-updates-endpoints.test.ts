import { createHash, createHmac, timingSafeEqual } from 'node:crypto';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { vaultAccounts } from '../../main/cloud-client/credentials.ts';
import type { CloudClientError } from '../../main/cloud-client/index.ts';
import { cloudAiSource } from '../../main/cloud-client/index.ts';
import { startHarness, TEST_MASTER_KEY, type Harness } from '../cloud/helpers/cloud-harness.ts';
import { signatureBaseFromDesign } from '../cloud/helpers/sign.ts';
import { startOpenAiFixture, type FixtureProvider } from '../fixtures/ai-providers/fixture-provider.ts';
import { startFaultProxy, type FaultProxy, type SeenRequest } from '../fixtures/fault-proxy.ts';
import { newClient, type TestClient } from './helpers/world.ts';

/**
 * ai/* and updates/* (the gateway's AI and update routes) through the app's client against
 * the real reference gateway: a provider registered by the operator command
 * (a real HTTP fixture provider behind it), a release published by the
 * operator command, limits set by it. A recording proxy in front of the
 * gateway keeps every request, and each signature is checked again with the
 * independent helper written from docs/cloud-gateway.md "Request signing". Release manifests are verified
 * with the pinned key before they are read.
 */
const RELEASE = Buffer.alloc(10, 0x5a);
const RELEASE_SHA512 = createHash('sha512').update(RELEASE).digest('base64');
let h: Harness;
let dir: string;
let provider: FixtureProvider;
let proxy: FaultProxy;
let t: TestClient;
let siteId: string;

/** Verifies a request exactly as docs/cloud-gateway.md "Request signing" says, from the headers received and the site's secret in the client's vault. */
async function verified(s: SeenRequest): Promise<boolean> {
  const identity = JSON.parse((await t.vault.get(vaultAccounts(t.dataDir).site))!) as {
    key_id: string;
    secret: string;
  };
  const input = String(s.headers['signature-input'] ?? '');
  const m = /^gatehouse=(\(.*\);created=\d+;nonce="[^"]+";keyid="([^"]+)";alg="hmac-sha256")$/.exec(input);
  if (!m || m[2] !== identity.key_id) return false;
  const digest = `sha-256=:${createHash('sha256').update(s.body).digest('base64')}:`;
  if (s.headers['content-digest'] !== digest) return false;
  const base = signatureBaseFromDesign(s.method, String(s.headers.host), s.path, s.query, digest, m[1]!);
  const mac = Buffer.from(`gatehouse=:${createHmac('sha256', identity.secret).update(base).digest('base64')}:`);
  const got = Buffer.from(String(s.headers.signature ?? ''));
  return got.length === mac.length && timingSafeEqual(got, mac);
}

const view = async (s: SeenRequest) => ({
  method: s.method,
  path: s.path.replace('/gateway/v1/', ''),
  query: s.query,
  body: s.body.length ? JSON.parse(s.body.toString()) : null,
  verified: await verified(s),
});
const last = () => view(proxy.seen[proxy.seen.length - 1]!);

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'gh-p2-'));
  provider = await startOpenAiFixture();
  h = await startHarness({
    releasesDir: join(dir, 'store'),
    env: { GATEHOUSE_CLOUD_MASTER_KEY: TEST_MASTER_KEY, KEY_MAIN: provider.key },
  });
  await h.op('providers.add', {
    id: 'openai-main',
    kind: 'openai',
    base_url: provider.baseUrl,
    api_key_env: 'KEY_MAIN',
    models: ['gpt-4o-mini'],
    tags: ['eu'],
  });
  await writeFile(join(dir, 'Gatehouse-9.9.9.AppImage'), RELEASE);
  await h.op('releases.publish', {
    product: 'mcp',
    channel: 'stable',
    version: '9.9.9',
    files: [join(dir, 'Gatehouse-9.9.9.AppImage')],
  });
  proxy = await startFaultProxy(h.svc.baseUrl);
  t = await newClient({ vaultBackend: 'file', sleep: async () => {} });
  const r = await t.client.connect({ url: proxy.url });
  expect(r.first_sync).toEqual({ ok: true });
  siteId = r.site_id;
  const lic = await h.op<{ license_key: string }>('licenses.create', { plan: 'pro' });
  await t.client.activate(lic.license_key);
}, 120_000);
afterAll(async () => {
  await t?.close();
  await proxy?.close();
  await h?.stop();
  await provider?.close();
  await rm(dir, { recursive: true, force: true });
});

describe('AI through the gateway', () => {
  it('lists providers and models, routes and generates with signed requests in the documented shape (docs/cloud-gateway.md "AI")', async () => {
    const api = t.client.api!;
    expect((await api.aiProviders()).data.providers[0]!.id).toBe('openai-main');
    expect(await last()).toMatchObject({ method: 'GET', path: 'ai/providers', verified: true });
    expect((await api.aiModels()).data.models[0]!.id).toBe('gpt-4o-mini');
    const req = {
      product: 'verto',
      feature: 'verto.translate',
      messages: [{ role: 'user' as const, content: 'Hello' }],
      max_tokens: 50,
    };
    expect((await api.aiRoute(req)).data).toMatchObject({
      provider: 'openai-main',
      model: 'gpt-4o-mini',
      reasons: [
        'account policy allows every provider',
        "no model requested: each provider's default model",
        'fallback order (registry): openai-main',
        'route: openai-main/gpt-4o-mini',
      ],
    });
    expect(await last()).toMatchObject({ method: 'POST', path: 'ai/route', body: req, verified: true });
    provider.script({ kind: 'success', text: 'Bonjour', usage: { input: 12, output: 3 } });
    expect((await api.aiGenerate(req)).data.usage).toEqual({ tokens_input: 12, tokens_output: 3 });
    expect(await last()).toMatchObject({ method: 'POST', path: 'ai/generate', body: req, verified: true });
    await expect(api.aiGenerate({ ...req, messages: [{ role: 'user', content: 'a\u0000b' }] })).rejects.toMatchObject({
      code: 'invalid_value',
    });
  });

  it('is the AiProvider port for the translation: system + prompt in, text and token counts out', async () => {
    provider.script({ kind: 'success', text: 'Bonjour', usage: { input: 12, output: 3 } });
    const source = cloudAiSource(() => t.client.api, { product: 'verto', feature: 'verto.translate' });
    const out = await source
      .current()!
      .generate({ system: 'Translate to French', prompt: 'Hello', model: 'gpt-4o-mini' });
    expect(out).toEqual({ text: 'Bonjour', model: 'gpt-4o-mini', tokens_input: 12, tokens_output: 3 });
    expect((await last()).body).toEqual({
      product: 'verto',
      feature: 'verto.translate',
      model: 'gpt-4o-mini',
      messages: [
        { role: 'system', content: 'Translate to French' },
        { role: 'user', content: 'Hello' },
      ],
    });
  });

  it('retries provider_unavailable (503), never quota_exceeded; both reach the caller with their details', async () => {
    const api = t.client.api!;
    const req = { product: 'verto', feature: 'verto.translate', messages: [{ role: 'user' as const, content: 'Hi' }] };
    provider.setDefault({ kind: 'server_error' });
    const e1 = (await api.aiGenerate(req).catch((e: unknown) => e)) as CloudClientError;
    provider.reset();
    expect(e1).toMatchObject({ code: 'provider_unavailable', info: { attempts: 3, stopped: 'attempts_exhausted' } });
    expect(t.client.status().breaker.state).toBe('closed'); // the providers failed, not the gateway
    const used =
      (
        await h.svc.ctx.db.query<{ used: number }>(
          `SELECT used::int FROM usage_counters WHERE scope = 'site' AND subject = $1 AND metric = 'ai_tokens' AND period = 'month'`,
          [siteId],
        )
      ).rows[0]?.used ?? 0;
    await h.op('limits.set', { scope: 'site', subject: siteId, metric: 'ai_tokens', period: 'month', limit: used });
    const before = proxy.seen.length;
    const calls = provider.count;
    const e2 = (await api.aiGenerate(req).catch((e: unknown) => e)) as CloudClientError;
    expect(proxy.seen.length - before).toBe(1);
    expect(provider.count).toBe(calls);
    const d = new Date();
    const nextMonth = new Date(Date.UTC(d.getUTCFullYear(), d.getUTCMonth() + 1, 1)).toISOString();
    expect(e2).toMatchObject({
      code: 'quota_exceeded',
      details: { scope: 'site', metric: 'ai_tokens', limit: used, reset_at: nextMonth },
    });
    await h.op('limits.set', { scope: 'site', subject: siteId, metric: 'ai_tokens', period: 'month', limit: null });
  });
});

describe('updates through the gateway', () => {
  it('checks, fetches the package, verifies a file; the manifest is read only after its signature verifies with the pinned key', async () => {
    const api = t.client.api!;
    const check = (await api.updatesCheck({ version: '1.0.0', platform: 'linux', arch: 'x64' })).data;
    expect(await last()).toMatchObject({
      method: 'GET',
      path: 'updates/check',
      query: 'product=mcp&version=1.0.0&platform=linux&arch=x64',
      verified: true,
    });
    const opened = t.client.openManifest(check.manifest);
    expect(opened).toMatchObject({ ok: true, payload: { version: '9.9.9', channel: 'stable' } });
    const tampered = {
      ...check.manifest!,
      payload: Buffer.from(
        Buffer.from(check.manifest!.payload, 'base64url').toString().replace('9.9.9', '9.9.8'),
      ).toString('base64url'),
    };
    expect(t.client.openManifest(tampered)).toMatchObject({
      ok: false,
      reason: expect.stringMatching(/does not verify/),
    });
    const pkg = (await api.updatesPackage({ version: '1.0.0' })).data;
    expect(pkg.files[0]!.name).toBe('Gatehouse-9.9.9.AppImage');
    const v = (
      await api.updatesVerify({ version: '9.9.9', name: 'Gatehouse-9.9.9.AppImage', sha512: RELEASE_SHA512, size: 10 })
    ).data;
    expect(v.valid).toBe(true);
    expect(await last()).toMatchObject({ method: 'POST', path: 'updates/verify', verified: true });
    await expect(api.updatesCheck({ version: 'v1' })).rejects.toMatchObject({ code: 'invalid_value' });
  });

  it('every signed request the client sent verified', async () => {
    const signed = proxy.seen.filter((s) => !['/gateway/v1/keys', '/gateway/v1/sites/register'].includes(s.path));
    expect(signed.length).toBeGreaterThan(10);
    expect((await Promise.all(signed.map(async (s) => ((await verified(s)) ? null : s.path)))).filter(Boolean)).toEqual(
      [],
    );
  });
});
