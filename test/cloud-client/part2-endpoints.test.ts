import { createHash, createHmac, generateKeyPairSync, sign, timingSafeEqual } from 'node:crypto';
import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { CloudClientError } from '../../main/cloud/index.ts';
import { cloudAiSource } from '../../main/cloud/index.ts';
import { signatureBaseFromDesign } from '../cloud/helpers/sign.ts';
import { newClient, type TestClient } from './helpers/world.ts';

/**
 * ai/* and updates/* (part 2 of the gateway, not served by the reference
 * service yet): the client's requests checked on the wire by a stand-in that
 * verifies every signature with the independent helper written from
 * DESIGN.md, and answers the shapes of main/contract/cloud/ai.ts,
 * updates.ts and part2-answers.ts. Release manifests are verified with the
 * pinned key before they are read.
 */
const SECRET = 'ghs_' + 'k'.repeat(40);
const KEY_ID = 'key_stub';
const { publicKey, privateKey } = generateKeyPairSync('ed25519');
const X = publicKey.export({ format: 'jwk' }).x!;
const KID = 'ed_stub';

const signed = (payload: unknown) => {
  const bytes = Buffer.from(JSON.stringify(payload));
  return { payload: bytes.toString('base64url'), sig: sign(null, bytes, privateKey).toString('base64url'), alg: 'ed25519', kid: KID };
};
const now = () => new Date().toISOString();
const certificate = () =>
  signed({
    site_id: 'site_stub',
    license: { status: 'active', plan: 'pro', key_preview: 'ghl_…abcd', expires_at: null },
    entitlements: [{ feature: 'verto.translate', allowed: true, plan: 'pro', expires_at: null }],
    products: { aeo: 'active', code: 'active', verto: 'active', mcp: 'active', pro: 'active' },
    limits: [],
    update: { channel: 'stable', eligible: true },
    issued_at: now(),
    cert_expires_at: new Date(Date.now() + 7 * 86_400_000).toISOString(),
  });
const manifest = (version: string) =>
  signed({ type: 'gatehouse.release-manifest', v: 1, product: 'mcp', channel: 'stable', version, released_at: now(), staging_percentage: 100, notes: null, files: [{ name: `Gatehouse-${version}.AppImage`, platform: 'linux', arch: 'x64', size: 10, sha512: 'A'.repeat(86) + '==' }], issued_at: now() });

interface Seen {
  method: string;
  path: string;
  query: string;
  body: unknown;
  verified: boolean;
}
const seen: Seen[] = [];
type Scripted = { status: number; body: unknown; headers?: Record<string, string> };
const script: Scripted[] = [];
let server: Server;
let t: TestClient;

/** Verifies a request exactly as DESIGN.md says, from the headers received. */
function verifySignature(req: IncomingMessage, raw: Buffer): boolean {
  const input = String(req.headers['signature-input'] ?? '');
  const m = /^gatehouse=(\(.*\);created=\d+;nonce="[^"]+";keyid="([^"]+)";alg="hmac-sha256")$/.exec(input);
  if (!m || m[2] !== KEY_ID) return false;
  const digest = `sha-256=:${createHash('sha256').update(raw).digest('base64')}:`;
  if (req.headers['content-digest'] !== digest) return false;
  const [path, query = ''] = (req.url ?? '').split('?');
  const base = signatureBaseFromDesign(req.method!, String(req.headers.host), path!, query, digest, m[1]!);
  const mac = Buffer.from(`gatehouse=:${createHmac('sha256', SECRET).update(base).digest('base64')}:`);
  const got = Buffer.from(String(req.headers.signature ?? ''));
  return got.length === mac.length && timingSafeEqual(got, mac);
}

function answer(path: string): { status: number; body: unknown } {
  switch (path) {
    case 'keys':
      return { status: 200, body: { keys: [{ kty: 'OKP', crv: 'Ed25519', x: X, kid: KID, use: 'sig' }] } };
    case 'sites/register':
      return { status: 200, body: { success: true, site_id: 'site_stub', key_id: KEY_ID, secret: SECRET, environment: 'production' } };
    case 'sites/sync':
      return { status: 200, body: { success: true, site: { site_id: 'site_stub', url: 'http://127.0.0.1/', name: null, environment: 'production', status: 'active', account_id: null, license: { status: 'active', plan: 'pro', key_preview: null, expires_at: null }, version: '1', products_in_use: ['mcp'], outbox_depth: 0, last_sync_at: now(), registered_at: now() }, certificate: certificate(), server_time: now() } };
    case 'ai/providers':
      return { status: 200, body: { success: true, providers: [{ id: 'openai-main', models: ['gpt-4o-mini'], tags: ['eu'] }] } };
    case 'ai/models':
      return { status: 200, body: { success: true, models: [{ id: 'gpt-4o-mini', provider: 'openai-main' }] } };
    case 'ai/route':
      return { status: 200, body: { success: true, provider: 'openai-main', model: 'gpt-4o-mini', reasons: ['first allowed provider'] } };
    case 'ai/generate':
      return { status: 200, body: { success: true, text: 'Bonjour', provider: 'openai-main', model: 'gpt-4o-mini', usage: { tokens_input: 12, tokens_output: 3 }, request_id: 'r' } };
    case 'updates/check':
      return { status: 200, body: { success: true, channel: 'stable', eligible: true, update_available: true, manifest: manifest('9.9.9') } };
    case 'updates/package':
      return { status: 200, body: { success: true, manifest: manifest('9.9.9'), files: [{ name: 'Gatehouse-9.9.9.AppImage', url: 'https://dl.example/x?sig=1', expires_at: now() }] } };
    case 'updates/verify':
      return { status: 200, body: { success: true, valid: true } };
    default:
      return { status: 404, body: { success: false, error: { code: 'not_found', message: 'no such endpoint', request_id: 'r', retryable: false } } };
  }
}

beforeAll(async () => {
  server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c)).on('end', () => {
      const raw = Buffer.concat(chunks);
      const [full, query = ''] = (req.url ?? '').split('?');
      const path = full!.replace('/gateway/v1/', '');
      seen.push({ method: req.method!, path, query, body: raw.length ? JSON.parse(raw.toString()) : null, verified: verifySignature(req, raw) });
      const a: Scripted = script.shift() ?? answer(path);
      res.writeHead(a.status, { 'content-type': 'application/json', 'x-request-id': String(req.headers['x-request-id']), ...a.headers });
      res.end(JSON.stringify(a.body));
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
  t = await newClient({ vaultBackend: 'file', sleep: async () => {} });
  const r = await t.client.connect({ url: `http://127.0.0.1:${(server.address() as AddressInfo).port}` });
  expect(r.first_sync).toEqual({ ok: true });
});
afterAll(async () => {
  await t?.close();
  await new Promise<void>((r) => server.close(() => r()));
});

const last = () => seen[seen.length - 1]!;

describe('AI through the gateway', () => {
  it('lists providers and models, routes and generates with signed requests in the DESIGN.md shape', async () => {
    const api = t.client.api!;
    expect((await api.aiProviders()).data.providers[0]!.id).toBe('openai-main');
    expect(last()).toMatchObject({ method: 'GET', path: 'ai/providers', verified: true });
    expect((await api.aiModels()).data.models[0]!.id).toBe('gpt-4o-mini');
    const req = { product: 'verto', feature: 'verto.translate', messages: [{ role: 'user' as const, content: 'Hello' }], max_tokens: 50 };
    expect((await api.aiRoute(req)).data.reasons).toHaveLength(1);
    expect(last()).toMatchObject({ method: 'POST', path: 'ai/route', body: req, verified: true });
    expect((await api.aiGenerate(req)).data.usage).toEqual({ tokens_input: 12, tokens_output: 3 });
    expect(last()).toMatchObject({ method: 'POST', path: 'ai/generate', body: req, verified: true });
    await expect(api.aiGenerate({ ...req, messages: [{ role: 'user', content: 'a\u0000b' }] })).rejects.toMatchObject({ code: 'invalid_value' });
  });

  it('is the AiProvider port for the translation: system + prompt in, text and token counts out', async () => {
    const source = cloudAiSource(() => t.client.api, { product: 'verto', feature: 'verto.translate' });
    const out = await source.current()!.generate({ system: 'Translate to French', prompt: 'Hello', model: 'gpt-4o-mini' });
    expect(out).toEqual({ text: 'Bonjour', model: 'gpt-4o-mini', tokens_input: 12, tokens_output: 3 });
    expect(last().body).toEqual({ product: 'verto', feature: 'verto.translate', model: 'gpt-4o-mini', messages: [{ role: 'system', content: 'Translate to French' }, { role: 'user', content: 'Hello' }] });
  });

  it('retries provider_unavailable (503), never quota_exceeded; both reach the caller with their details', async () => {
    const api = t.client.api!;
    const req = { product: 'verto', feature: 'verto.translate', messages: [{ role: 'user' as const, content: 'Hi' }] };
    const unavailable = { status: 503, body: { success: false, error: { code: 'provider_unavailable', message: 'every provider failed', request_id: 'r', retryable: true, retry_after_s: 1 } }, headers: { 'retry-after': '1' } };
    script.push(unavailable, unavailable, unavailable);
    const e1 = (await api.aiGenerate(req).catch((e: unknown) => e)) as CloudClientError;
    expect(e1).toMatchObject({ code: 'provider_unavailable', info: { attempts: 3, stopped: 'attempts_exhausted' } });
    expect(t.client.status().breaker.state).toBe('closed'); // the providers failed, not the gateway
    script.push({ status: 429, body: { success: false, error: { code: 'quota_exceeded', message: 'monthly ai_tokens limit reached', request_id: 'r', retryable: false, scope: 'site', metric: 'ai_tokens', limit: 10, used: 10, reset_at: '2030-01-01T00:00:00Z' } }, headers: { 'retry-after': '999' } });
    const before = seen.length;
    const e2 = (await api.aiGenerate(req).catch((e: unknown) => e)) as CloudClientError;
    expect(seen.length - before).toBe(1);
    expect(e2).toMatchObject({ code: 'quota_exceeded', details: { scope: 'site', metric: 'ai_tokens', reset_at: '2030-01-01T00:00:00Z' } });
  });
});

describe('updates through the gateway', () => {
  it('checks, fetches the package, verifies a file; the manifest is read only after its signature verifies with the pinned key', async () => {
    const api = t.client.api!;
    const check = (await api.updatesCheck({ version: '1.0.0', platform: 'linux', arch: 'x64' })).data;
    expect(last()).toMatchObject({ method: 'GET', path: 'updates/check', query: 'product=mcp&version=1.0.0&platform=linux&arch=x64', verified: true });
    const opened = t.client.openManifest(check.manifest);
    expect(opened).toMatchObject({ ok: true, payload: { version: '9.9.9', channel: 'stable' } });
    const tampered = { ...check.manifest!, payload: Buffer.from(Buffer.from(check.manifest!.payload, 'base64url').toString().replace('9.9.9', '9.9.8')).toString('base64url') };
    expect(t.client.openManifest(tampered)).toMatchObject({ ok: false, reason: expect.stringMatching(/does not verify/) });
    const pkg = (await api.updatesPackage({ version: '1.0.0' })).data;
    expect(pkg.files[0]!.name).toBe('Gatehouse-9.9.9.AppImage');
    const v = (await api.updatesVerify({ version: '9.9.9', name: 'Gatehouse-9.9.9.AppImage', sha512: 'A'.repeat(86) + '==', size: 10 })).data;
    expect(v.valid).toBe(true);
    expect(last()).toMatchObject({ method: 'POST', path: 'updates/verify', verified: true });
    await expect(api.updatesCheck({ version: 'v1' })).rejects.toMatchObject({ code: 'invalid_value' });
  });

  it('every signed request the client sent verified', () => {
    expect(seen.filter((s) => !['keys', 'sites/register'].includes(s.path) && !s.verified)).toEqual([]);
  });
});
