import { request as httpRequest } from 'node:http';
import { PassThrough } from 'node:stream';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { reservationFor } from '../../cloud/ai/ai-router.ts';
import { AiGenerateAnswer, AiModelsAnswer, AiProvidersAnswer, AiRouteAnswer } from '../../main/contract/cloud/index.ts';
import { createLogger } from '../../main/lib/logger.ts';
import {
  startAnthropicFixture,
  startOpenAiFixture,
  type FixtureProvider,
} from '../fixtures/ai-providers/fixture-provider.ts';
import { register, type SiteClient } from './helpers/client.ts';
import { signHeaders } from './helpers/sign.ts';
import { startHarness, TEST_MASTER_KEY, type Harness } from './helpers/cloud-harness.ts';

/**
 * ai/providers, ai/models, ai/route and ai/generate against the real service,
 * signed with the independent helper, with real HTTP fixture providers that
 * count every request: the stored registry, the account's policy, fallback,
 * quotas held in SQL before every hop, and exactly one usage event.
 */
let h: Harness;
let primary: FixtureProvider; // openai, eu
let backup: FixtureProvider; // anthropic, eu
let outside: FixtureProvider; // openai, us: registered, enabled, never allowed for the account
let site: SiteClient;
let accountId: string;
const logged = new PassThrough();
let logText = '';
logged.on('data', (c: Buffer) => (logText += c.toString()));

const MODEL_REQ = {
  product: 'verto',
  feature: 'verto.translate',
  messages: [{ role: 'user' as const, content: 'Translate: good morning' }],
  max_tokens: 40,
};
const counts = () => [primary.count, backup.count, outside.count];
const tokenRows = async () =>
  (
    await h.svc.ctx.db.query<{ used: number; reserved: number }>(
      `SELECT used::int, reserved::int FROM usage_counters WHERE scope = 'site' AND subject = $1 AND metric = 'ai_tokens' AND period = 'month'`,
      [site.creds.site_id],
    )
  ).rows[0] ?? { used: 0, reserved: 0 };
const aiEvents = async () =>
  (
    await h.svc.ctx.db.query<{ n: number; tokens: number }>(
      `SELECT count(*)::int AS n, COALESCE(sum(tokens_input + tokens_output), 0)::int AS tokens FROM usage_events WHERE site_id = $1 AND event = 'ai.generation.completed'`,
      [site.creds.site_id],
    )
  ).rows[0]!;

/** A signed ai/generate sent by hand (so a test can drop the connection), once the primary provider has it and its hold is on. */
async function generateUntilCalled(): Promise<ReturnType<typeof httpRequest>> {
  const before = primary.count;
  const url = `${h.gateway}/ai/generate`;
  const body = JSON.stringify({ ...MODEL_REQ, model: 'small-1' });
  const req = httpRequest(url, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...signHeaders(site.creds, { method: 'POST', url, body }) },
  });
  req.on('error', () => {});
  req.end(body);
  for (let i = 0; i < 500 && primary.count === before; i++) await new Promise((r) => setTimeout(r, 20));
  expect((await tokenRows()).reserved).toBeGreaterThan(0);
  return req;
}

beforeAll(async () => {
  [primary, backup, outside] = await Promise.all([
    startOpenAiFixture(),
    startAnthropicFixture(),
    startOpenAiFixture({ key: 'sk-fixture-outside-0123456789abcdefghij' }),
  ]);
  h = await startHarness({
    env: {
      GATEHOUSE_CLOUD_MASTER_KEY: TEST_MASTER_KEY,
      KEY_PRIMARY: primary.key,
      KEY_BACKUP: backup.key,
      KEY_OUTSIDE: outside.key,
    },
    log: createLogger({ level: 'debug', stream: logged, json: true }),
    ai: { hopTimeoutMs: 2000, deadlineMs: 20_000 },
  });
  await h.op('providers.add', {
    id: 'outside-us',
    kind: 'openai',
    base_url: outside.baseUrl,
    api_key_env: 'KEY_OUTSIDE',
    models: ['small-1', 'us-only-1'],
    tags: ['us'],
  });
  await h.op('providers.add', {
    id: 'primary-eu',
    kind: 'openai',
    base_url: primary.baseUrl,
    api_key_env: 'KEY_PRIMARY',
    models: ['small-1', 'large-1'],
    tags: ['eu', 'approved'],
  });
  await h.op('providers.add', {
    id: 'backup-eu',
    kind: 'anthropic',
    base_url: backup.baseUrl,
    api_key_env: 'KEY_BACKUP',
    models: ['haiku-1', 'small-1'],
    tags: ['eu', 'approved'],
  });
  await h.op('providers.class', { name: 'fast', models: ['small-1', 'haiku-1'] });
  site = await register(h.gateway);
  const lic = await h.op<{ license_key: string; account_id: string }>('licenses.create', { plan: 'pro' });
  accountId = lic.account_id;
  expect((await site.post('license/activate', { license_key: lic.license_key })).status).toBe(200);
  await h.op('accounts.policy.set', {
    account: accountId,
    ai_allowed_providers: ['primary-eu', 'backup-eu'],
    ai_required_tags: ['eu'],
    ai_fallback_order: ['primary-eu', 'backup-eu'],
  });
}, 180_000);
afterAll(async () => {
  await h?.stop();
  await Promise.all([primary, backup, outside].map((f) => f?.close()));
});
beforeEach(() => {
  // A test that ends on a quota refusal leaves part of its script unused.
  for (const f of [primary, backup, outside]) f.reset();
});

describe('ai/providers and ai/models', () => {
  it("list only what the account's policy allows, without URLs or key variables", async () => {
    const p = await site.get('ai/providers');
    expect(p.status).toBe(200);
    expect(p.body.providers.map((x: { id: string }) => x.id)).toEqual(['primary-eu', 'backup-eu']);
    expect(p.body.providers[0]).toEqual({
      id: 'primary-eu',
      kind: 'openai',
      models: ['small-1', 'large-1'],
      tags: ['eu', 'approved'],
    });
    const text = JSON.stringify(p.body);
    for (const secret of ['127.0.0.1', 'KEY_PRIMARY', primary.key]) expect(text).not.toContain(secret);
    expect(AiProvidersAnswer.safeParse(p.body).success).toBe(true);
    const m = await site.get('ai/models');
    expect(AiModelsAnswer.safeParse(m.body).success).toBe(true);
    expect(m.body.models.map((x: { id: string }) => x.id).sort()).toEqual(['haiku-1', 'large-1', 'small-1']);
    expect(m.body.models.find((x: { id: string }) => x.id === 'small-1')).toMatchObject({
      provider: 'primary-eu',
      providers: ['primary-eu', 'backup-eu'],
    });
    expect(m.body.classes).toEqual([{ name: 'fast', models: ['small-1', 'haiku-1'] }]);
    expect(JSON.stringify(m.body)).not.toContain('us-only-1');
  });
});

describe('ai/route', () => {
  it('names the provider and model ai/generate would use, with the policy steps, and calls nobody', async () => {
    const before = counts();
    const r = await site.post('ai/route', { ...MODEL_REQ, model: 'fast' });
    expect(r.status).toBe(200);
    expect(r.body).toMatchObject({ success: true, provider: 'primary-eu', model: 'small-1' });
    expect(AiRouteAnswer.safeParse(r.body).success).toBe(true);
    expect(r.body.reasons.join('\n')).toMatch(/account policy allows providers: primary-eu, backup-eu/);
    expect(r.body.reasons.join('\n')).toMatch(/required tags eu/);
    expect(counts()).toEqual(before);
  });

  it('refuses a model only a provider outside the policy offers (403 forbidden), and one nobody offers (400)', async () => {
    const before = counts();
    const f = await site.post('ai/route', { ...MODEL_REQ, model: 'us-only-1' });
    expect(f.status).toBe(403);
    expect(f.body.error).toMatchObject({ code: 'forbidden', retryable: false });
    const n = await site.post('ai/route', { ...MODEL_REQ, model: 'gpt-nobody' });
    expect(n.status).toBe(400);
    expect(n.body.error.code).toBe('invalid_request');
    expect(counts()).toEqual(before);
  });
});

describe('ai/generate', () => {
  it('answers the documented shape (docs/cloud-gateway.md "AI"), settles the tokens and records ai.generation.completed exactly once', async () => {
    const before = await tokenRows();
    const events = await aiEvents();
    const r = await site.post('ai/generate', MODEL_REQ, { headers: { 'X-Request-Id': 'req-ai-1' } });
    expect(r.status).toBe(200);
    expect(r.body).toEqual({
      success: true,
      text: 'echo: Translate: good morning',
      provider: 'primary-eu',
      model: 'small-1',
      usage: { tokens_input: expect.any(Number), tokens_output: expect.any(Number) },
      request_id: 'req-ai-1',
    });
    expect(AiGenerateAnswer.safeParse(r.body).success).toBe(true);
    const spent = r.body.usage.tokens_input + r.body.usage.tokens_output;
    expect(await tokenRows()).toEqual({ used: before.used + spent, reserved: 0 });
    expect(await aiEvents()).toEqual({ n: events.n + 1, tokens: events.tokens + spent });
    const ev = (
      await h.svc.ctx.db.query(
        `SELECT event, product, feature, model, units FROM usage_events WHERE site_id = $1 AND event = 'ai.generation.completed' ORDER BY received_at DESC LIMIT 1`,
        [site.creds.site_id],
      )
    ).rows[0];
    expect(ev).toEqual({
      event: 'ai.generation.completed',
      product: 'verto',
      feature: 'verto.translate',
      model: 'small-1',
      units: 1,
    });
  });

  it('falls back from a failing provider to the next allowed one, and counts only the answer', async () => {
    primary.script({ kind: 'server_error' });
    const [p, b, o] = counts();
    const events = await aiEvents();
    const r = await site.post('ai/generate', { ...MODEL_REQ, model: 'small-1' });
    expect(r.status).toBe(200);
    expect(r.body).toMatchObject({ provider: 'backup-eu', model: 'small-1' });
    expect(counts()).toEqual([p! + 1, b! + 1, o]);
    expect((await aiEvents()).n).toBe(events.n + 1);
    expect((await tokenRows()).reserved).toBe(0);
  });

  it('falls back when a provider does not answer in time', async () => {
    primary.script({ kind: 'hang' });
    const r = await site.post('ai/generate', { ...MODEL_REQ, model: 'small-1' });
    expect(r.status).toBe(200);
    expect(r.body.provider).toBe('backup-eu');
    expect((await tokenRows()).reserved).toBe(0);
  });

  it('answers provider_unavailable only when every allowed route fails; the disallowed provider is never called', async () => {
    primary.setDefault({ kind: 'server_error' });
    backup.setDefault({ kind: 'rate_limited', retry_after: '3' });
    const events = await aiEvents();
    const r = await site.post('ai/generate', { ...MODEL_REQ, model: 'small-1' });
    expect(r.status).toBe(503);
    expect(r.body.error).toMatchObject({ code: 'provider_unavailable', retryable: true });
    expect(r.body.error.message).toMatch(/primary-eu \(provider error\), backup-eu \(rate limited\)/);
    expect(Number(r.headers['retry-after'])).toBe(3);
    expect(outside.count).toBe(0);
    expect(outside.requests).toEqual([]);
    expect((await aiEvents()).n).toBe(events.n);
    expect((await tokenRows()).reserved).toBe(0);
  });

  it('never lets concurrent generations overshoot one token budget, fallbacks included', async () => {
    const req = { ...MODEL_REQ, model: 'small-1' };
    const hold = reservationFor(req);
    const { used } = await tokenRows();
    const LIMIT = used + 3 * hold;
    await h.op('limits.set', {
      scope: 'site',
      subject: site.creds.site_id,
      metric: 'ai_tokens',
      period: 'month',
      limit: LIMIT,
    });
    // The primary answers slowly or fails, so generations overlap and half of them need a second hop.
    primary.script(
      ...Array.from({ length: 10 }, (_, i) =>
        i % 2 ? { kind: 'server_error' as const } : { kind: 'slow' as const, delay_ms: 150 },
      ),
    );
    backup.setDefault({ kind: 'slow', delay_ms: 100 });
    let peak = 0;
    let sampling = true;
    const sampler = (async () => {
      while (sampling) {
        const t = await tokenRows();
        peak = Math.max(peak, t.used + t.reserved);
        await new Promise((r) => setTimeout(r, 10));
      }
    })();
    const results = await Promise.all(Array.from({ length: 10 }, () => site.post('ai/generate', req)));
    sampling = false;
    await sampler;
    const ok = results.filter((r) => r.status === 200);
    const refused = results.filter((r) => r.status === 429);
    expect(ok.length + refused.length).toBe(10);
    expect(ok.length).toBeGreaterThan(0);
    expect(refused.length).toBeGreaterThan(0);
    for (const r of refused) {
      expect(r.body.error).toMatchObject({ code: 'quota_exceeded', scope: 'site', metric: 'ai_tokens', limit: LIMIT });
      expect(Number(r.headers['retry-after'])).toBeGreaterThan(0);
    }
    const after = await tokenRows();
    expect(after.reserved).toBe(0);
    expect(after.used).toBeLessThanOrEqual(LIMIT);
    expect(peak).toBeLessThanOrEqual(LIMIT);
    const spent = ok.reduce((n, r) => n + r.body.usage.tokens_input + r.body.usage.tokens_output, 0);
    expect(after.used).toBe(used + spent);
    await h.op('limits.set', {
      scope: 'site',
      subject: site.creds.site_id,
      metric: 'ai_tokens',
      period: 'month',
      limit: null,
    });
  });

  it('takes a body over the usual 256 KiB (up to the content limits) and refuses malformed requests with 400', async () => {
    const big = 'é'.repeat(99_000);
    const r = await site.post('ai/generate', {
      ...MODEL_REQ,
      max_tokens: 10,
      messages: [
        { role: 'system', content: big },
        { role: 'user', content: big },
      ],
    });
    expect(r.status).toBe(200);
    for (const bad of [
      { ...MODEL_REQ, messages: [] },
      { ...MODEL_REQ, feature: 'seo.analyze' },
      { ...MODEL_REQ, messages: [{ role: 'user', content: 'a\u0000b' }] },
      { ...MODEL_REQ, extra: 1 },
    ]) {
      const x = await site.post('ai/generate', bad);
      expect(x.status).toBe(400);
      expect(x.body.error.code).toBe('invalid_request');
    }
  });

  it("needs the feature in the site's plan, and the account can switch cloud AI off for all its sites", async () => {
    const free = await register(h.gateway);
    const lic = await h.op<{ license_key: string }>('licenses.create', { plan: 'free' });
    await free.post('license/activate', { license_key: lic.license_key });
    const before = counts();
    const r = await free.post('ai/generate', MODEL_REQ);
    expect(r.status).toBe(403);
    expect(r.body.error).toMatchObject({ code: 'entitlement_required', required_plan: 'pro' });
    await h.op('accounts.policy.set', { account: accountId, features_off: ['ai.generate'] });
    const off = await site.post('ai/generate', MODEL_REQ);
    expect(off.status).toBe(403);
    expect(off.body.error).toMatchObject({ code: 'entitlement_required', required_plan: null, switched_off: true });
    expect((await site.get('ai/providers')).body.error.code).toBe('entitlement_required');
    await h.op('accounts.policy.set', { account: accountId, features_off: [] });
    expect(counts()).toEqual(before);
  });

  it('when the site goes away mid-generation, the answer in flight is still settled and recorded once, and no fallback is called', async () => {
    primary.script({ kind: 'slow', delay_ms: 600 });
    const [p, b] = counts();
    const events = await aiEvents();
    const before = await tokenRows();
    const req = await generateUntilCalled();
    req.destroy();
    for (let i = 0; i < 500 && (await aiEvents()).n === events.n; i++) await new Promise((r) => setTimeout(r, 20));
    const after = await aiEvents();
    expect(after.n).toBe(events.n + 1);
    expect(await tokenRows()).toEqual({ used: before.used + after.tokens - events.tokens, reserved: 0 });
    expect(counts().slice(0, 2)).toEqual([p! + 1, b]);
  });

  it('when the site goes away while the provider hangs, the hold is released at the hop timeout and no fallback is called', async () => {
    primary.script({ kind: 'hang' });
    const [p, b] = counts();
    const events = await aiEvents();
    const req = await generateUntilCalled();
    req.destroy();
    for (let i = 0; i < 500 && (await tokenRows()).reserved > 0; i++) await new Promise((r) => setTimeout(r, 20));
    expect((await tokenRows()).reserved).toBe(0);
    expect(counts().slice(0, 2)).toEqual([p! + 1, b]);
    expect((await aiEvents()).n).toBe(events.n);
  });

  it('never puts a provider key in an answer or a log line', async () => {
    primary.script({ kind: 'server_error' });
    await site.post('ai/generate', MODEL_REQ);
    await h.svc.ctx.requestLog.flush();
    for (const f of [primary, backup, outside]) {
      expect(logText).not.toContain(f.key);
      expect(logText).not.toContain(f.key.slice(-12));
    }
    expect(logText).toMatch(/ai provider call failed/);
  });
});
