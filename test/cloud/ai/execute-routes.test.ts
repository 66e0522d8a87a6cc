import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import type { ProviderRecord } from '../../../cloud/ai/provider-record.ts';
import { callProvider } from '../../../cloud/ai/providers/call-provider.ts';
import type { ProviderOutcome } from '../../../cloud/ai/providers/outcome.ts';
import { BreakerBoard } from '../../../cloud/ai/routing/breaker.ts';
import { executeRoutes, type ExecuteOptions } from '../../../cloud/ai/routing/execute-routes.ts';
import { planRoutes, type Route } from '../../../cloud/ai/routing/plan-routes.ts';
import { AccountAiPolicy, OPEN_POLICY } from '../../../cloud/ai/routing/policy.ts';
import { SUCCESS } from '../../fixtures/ai-providers/behaviours.ts';
import {
  startAnthropicFixture,
  startOpenAiFixture,
  type FixtureProvider,
} from '../../fixtures/ai-providers/fixture-provider.ts';

// Plan + walk the routes against three real fixture providers: fallback,
// a disallowed provider never called, provider_unavailable when all fail,
// the beforeHop gate, breakers, and no key in any hop or log line.

let a: FixtureProvider; // openai, eu
let b: FixtureProvider; // anthropic, eu
let c: FixtureProvider; // openai, us
let registry: ProviderRecord[];
let env: Record<string, string>;

beforeAll(async () => {
  [a, b, c] = await Promise.all([
    startOpenAiFixture(),
    startAnthropicFixture(),
    startOpenAiFixture({ key: 'sk-fixture-us-abcdefghijklmnopqrstuvwxyz' }),
  ]);
  registry = [
    {
      id: 'alpha',
      kind: 'openai',
      base_url: a.baseUrl,
      api_key_env: 'KEY_ALPHA',
      models: ['m-small'],
      tags: ['eu'],
      enabled: true,
    },
    {
      id: 'beta',
      kind: 'anthropic',
      base_url: b.baseUrl,
      api_key_env: 'KEY_BETA',
      models: ['m-small'],
      tags: ['eu'],
      enabled: true,
    },
    {
      id: 'gamma',
      kind: 'openai',
      base_url: c.baseUrl,
      api_key_env: 'KEY_GAMMA',
      models: ['m-small'],
      tags: ['us'],
      enabled: true,
    },
  ];
  env = { KEY_ALPHA: a.key, KEY_BETA: b.key, KEY_GAMMA: c.key };
});
afterAll(() => Promise.all([a, b, c].map((f) => f.close())));
beforeEach(() => {
  for (const f of [a, b, c]) {
    f.requests.length = 0;
    f.setDefault(SUCCESS);
  }
});

const call =
  (stream = false, keys: Record<string, string> = env) =>
  (r: Route, signal: AbortSignal | undefined): Promise<ProviderOutcome> =>
    callProvider(
      r.provider,
      { model: r.model, max_tokens: 32, stream, messages: [{ role: 'user', content: 'ping' }] },
      { env: keys, ...(signal ? { signal } : {}) },
    );

function routes(policy = OPEN_POLICY, breakers?: BreakerBoard): Route[] {
  const p = planRoutes({
    providers: registry,
    policy,
    request: { model: 'm-small' },
    now: Date.now(),
    ...(breakers ? { breaker: (id) => breakers.view(id) } : {}),
  });
  if (!p.ok) throw new Error(p.message);
  return p.routes;
}

const run = (over: Partial<ExecuteOptions> = {}) => executeRoutes({ routes: routes(), call: call(), ...over });

describe('executeRoutes', () => {
  it.each([false, true])('falls back from a failing provider to the next allowed one (stream=%s)', async (stream) => {
    a.script(stream ? { kind: 'disconnect' } : { kind: 'server_error' });
    const r = await run({ call: call(stream) });
    expect(r).toMatchObject({ ok: true, text: 'echo: ping', model: 'm-small', route: { provider: { id: 'beta' } } });
    expect(r.hops.map((h) => [h.provider, h.status, h.kind])).toEqual([
      ['alpha', 'failed', stream ? 'disconnected' : 'server_error'],
      ['beta', 'ok', undefined],
    ]);
    expect([a.count, b.count, c.count]).toEqual([1, 1, 0]);
  });

  it('never calls a provider the account does not allow, even when every allowed one fails', async () => {
    a.setDefault({ kind: 'server_error' });
    b.setDefault({ kind: 'server_error', status: 529 });
    const r = await executeRoutes({ routes: routes(AccountAiPolicy.parse({ required_tags: ['eu'] })), call: call() });
    expect(r).toMatchObject({ ok: false, outcome: 'all_failed', code: 'provider_unavailable' });
    expect(c.count).toBe(0);
    expect([a.count, b.count]).toEqual([1, 1]);
  });

  it('answers provider_unavailable only when every route failed, with the soonest Retry-After', async () => {
    a.script({ kind: 'rate_limited', retry_after: '9' });
    b.script({ kind: 'slow', delay_ms: 5_000 });
    c.script({ kind: 'rate_limited', retry_after: '4' });
    const r = await run({
      call: (route, signal) =>
        callProvider(
          route.provider,
          { model: route.model, max_tokens: 8, messages: [{ role: 'user', content: 'x' }] },
          { env, timeoutMs: 200, ...(signal ? { signal } : {}) },
        ),
    });
    expect(r).toMatchObject({ ok: false, outcome: 'all_failed', code: 'provider_unavailable', retry_after_s: 4 });
    expect(r.hops.map((h) => h.kind)).toEqual(['rate_limited', 'timeout', 'rate_limited']);
    expect(!r.ok && 'message' in r && r.message).toBe(
      'every allowed AI provider failed: alpha (rate limited), beta (timed out), gamma (rate limited)',
    );
  });

  it('stops at a request every provider would refuse, without spending more quota on it', async () => {
    a.script({ kind: 'bad_request' });
    const r = await run();
    expect(r).toMatchObject({ ok: false, outcome: 'refused', code: 'invalid_request' });
    expect([a.count, b.count, c.count]).toEqual([1, 0, 0]);
  });

  it('falls back past a provider whose key is wrong or missing (our configuration, not the request)', async () => {
    const r = await run({ call: call(false, { KEY_ALPHA: 'sk-wrong-key-0123456789', KEY_GAMMA: c.key }) });
    expect(r).toMatchObject({ ok: true, route: { provider: { id: 'gamma' } } });
    expect(r.hops.map((h) => h.kind)).toEqual(['auth', 'not_configured', undefined]);
  });

  it('calls beforeHop before every hop and afterHop after every call, and stops when beforeHop throws', async () => {
    a.script({ kind: 'server_error' });
    const seen: string[] = [];
    const refusal = new Error('quota_exceeded');
    const r = await run({
      beforeHop: (route, hop) => {
        seen.push(`before ${hop} ${route.provider.id}`);
        if (hop === 1) throw refusal;
      },
      afterHop: (route, out, hop) =>
        void seen.push(`after ${hop} ${route.provider.id} ${out.ok ? 'ok' : out.failure.kind} in=${out.tokens_input}`),
    });
    expect(r).toMatchObject({ ok: false, outcome: 'stopped' });
    expect(!r.ok && r.outcome === 'stopped' && r.error).toBe(refusal);
    expect(seen).toEqual(['before 0 alpha', 'after 0 alpha server_error in=0', 'before 1 beta']);
    // The fallback that the budget refused was never called.
    expect([a.count, b.count]).toEqual([1, 0]);
  });

  it('reports the usage of the hop that answered, and of a partial stream that failed', async () => {
    a.script({ kind: 'disconnect' });
    const settled: number[] = [];
    const r = await run({
      call: call(true),
      afterHop: (_r, out) => void settled.push(out.tokens_input + out.tokens_output),
    });
    expect(r.ok && r.tokens_input).toBe(1);
    expect(settled.length).toBe(2);
    expect(settled.every((n) => n > 0)).toBe(true);
  });

  it('trips the breaker after consecutive failures; later plans skip the provider until the cooldown ends', async () => {
    let now = 1_000;
    const breakers = new BreakerBoard(() => now, { threshold: 2, cooldownMs: 60_000 });
    a.setDefault({ kind: 'server_error' });
    for (let i = 0; i < 2; i++) await executeRoutes({ routes: routes(OPEN_POLICY, breakers), call: call(), breakers });
    expect(breakers.view('alpha').phase).toBe('open');
    a.requests.length = 0;
    const r = await executeRoutes({ routes: routes(OPEN_POLICY, breakers), call: call(), breakers });
    expect(r).toMatchObject({ ok: true, route: { provider: { id: 'beta' } } });
    expect(a.count).toBe(0);
    // Half-open after the cooldown: one probe goes to alpha, and its success closes the circuit.
    now += 60_000;
    a.setDefault(SUCCESS);
    const probe = await executeRoutes({ routes: routes(OPEN_POLICY, breakers), call: call(), breakers });
    expect(probe).toMatchObject({ ok: true, route: { provider: { id: 'alpha' } } });
    expect(breakers.view('alpha').phase).toBe('closed');
  });

  it('skips a route whose breaker opened after the plan was made', async () => {
    const breakers = new BreakerBoard(() => 0, { threshold: 1 });
    const planned = routes(OPEN_POLICY, breakers);
    breakers.failure('alpha');
    const r = await executeRoutes({ routes: planned, call: call(), breakers });
    expect(r.hops[0]).toMatchObject({ provider: 'alpha', status: 'skipped', kind: 'cooling_down' });
    expect(a.count).toBe(0);
  });

  it('stops when the caller aborts', async () => {
    a.script({ kind: 'hang' });
    const ac = new AbortController();
    setTimeout(() => ac.abort(), 50);
    const r = await run({ signal: ac.signal });
    expect(r).toMatchObject({ ok: false, outcome: 'aborted' });
    expect(b.count).toBe(0);
  });

  it('keeps the keys out of hops, answers and log lines', async () => {
    const wrong = 'sk-wrong-but-secret-0123456789ABCDEF';
    b.script({ kind: 'rate_limited' });
    const lines: string[] = [];
    const r = await run({
      call: call(false, { KEY_ALPHA: wrong, KEY_BETA: b.key, KEY_GAMMA: c.key }),
      log: { warn: (m, f) => lines.push(`${m} ${JSON.stringify(f)}`) },
    });
    expect(r.ok).toBe(true);
    expect(lines.length).toBe(2);
    const everything = JSON.stringify(r) + lines.join('\n');
    for (const k of [wrong, a.key, b.key, c.key]) {
      expect(everything).not.toContain(k);
      // The fixture echoes a wrong key's first 8 and last 4 characters, as real providers do.
      expect(everything).not.toContain(k.slice(0, 8));
      expect(everything).not.toContain(k.slice(-4));
    }
  });
});
