import { describe, expect, it } from 'vitest';
import { ProviderRecord } from '../../../cloud/ai/provider-record.ts';
import { BreakerBoard } from '../../../cloud/ai/routing/breaker.ts';
import { planRoutes, type PlanInput } from '../../../cloud/ai/routing/plan-routes.ts';
import { AccountAiPolicy, ModelClasses, OPEN_POLICY } from '../../../cloud/ai/routing/policy.ts';

// The routing policy as a pure function: registry x account policy x request x breakers.

const provider = (id: string, models: string[], tags: string[], over: Partial<ProviderRecord> = {}): ProviderRecord =>
  ProviderRecord.parse({
    id,
    kind: id.startsWith('claude') ? 'anthropic' : 'openai',
    base_url: `https://${id}.example/v1`,
    api_key_env: `KEY_${id.toUpperCase().replace(/-/g, '_')}`,
    models,
    tags,
    ...over,
  });

const registry = [
  provider('openai-us', ['gpt-4o', 'gpt-4o-mini'], ['us', 'approved']),
  provider('openai-eu', ['gpt-4o-mini'], ['eu', 'approved']),
  provider('claude-eu', ['claude-haiku', 'claude-sonnet'], ['eu', 'approved']),
  provider('local-lab', ['llama-3'], ['eu'], { enabled: false }),
];
const classes = ModelClasses.parse({ fast: ['gpt-4o-mini', 'claude-haiku'], default: ['claude-haiku', 'gpt-4o-mini'] });

const plan = (over: Partial<PlanInput> = {}) =>
  planRoutes({ providers: registry, policy: OPEN_POLICY, request: {}, classes, now: 0, ...over });
const routeIds = (p: ReturnType<typeof plan>) => (p.ok ? p.routes.map((r) => `${r.provider.id}/${r.model}`) : p.code);

describe('planRoutes', () => {
  it('routes a model id to every enabled provider offering it, in registry order, and says why', () => {
    const p = plan({ request: { model: 'gpt-4o-mini' } });
    expect(routeIds(p)).toEqual(['openai-us/gpt-4o-mini', 'openai-eu/gpt-4o-mini']);
    expect(p.reasons).toEqual([
      'account policy allows every provider',
      'model gpt-4o-mini requested',
      'fallback order (registry): openai-us, openai-eu',
      'route: openai-us/gpt-4o-mini, openai-eu/gpt-4o-mini',
    ]);
  });

  it('keeps only the providers the account allows, and names none it does not', () => {
    const policy = AccountAiPolicy.parse({ allowed_providers: ['openai-eu', 'claude-eu'] });
    const p = plan({ policy, request: { model: 'gpt-4o-mini' } });
    expect(routeIds(p)).toEqual(['openai-eu/gpt-4o-mini']);
    expect(p.reasons[0]).toBe('account policy allows providers: openai-eu, claude-eu');
    expect(p.reasons.join('\n')).not.toContain('openai-us');
  });

  it('routes only to approved infrastructure: the account tags plus the request tags', () => {
    const policy = AccountAiPolicy.parse({ required_tags: ['eu'] });
    const p = plan({ policy, request: { model: 'fast', tags: ['approved'] } });
    expect(routeIds(p)).toEqual(['openai-eu/gpt-4o-mini', 'claude-eu/claude-haiku']);
    expect(p.reasons).toContain('required tags eu, approved: excluded openai-us (lacks eu)');
  });

  it('expands a model class in its order, and uses the default class when no model is named', () => {
    expect(routeIds(plan({ request: { model: 'fast' } }))).toEqual([
      'openai-us/gpt-4o-mini',
      'openai-eu/gpt-4o-mini',
      'claude-eu/claude-haiku',
    ]);
    const p = plan({ request: {} });
    expect(routeIds(p)).toEqual(['openai-us/gpt-4o-mini', 'openai-eu/gpt-4o-mini', 'claude-eu/claude-haiku']);
    expect(p.reasons).toContain('no model requested: class default (claude-haiku, gpt-4o-mini)');
  });

  it("uses each provider's first model when there is no default class", () => {
    expect(routeIds(plan({ classes: {}, request: {} }))).toEqual([
      'openai-us/gpt-4o',
      'openai-eu/gpt-4o-mini',
      'claude-eu/claude-haiku',
    ]);
  });

  it("puts the account's fallback order first, the rest after in registry order", () => {
    const policy = AccountAiPolicy.parse({ fallback_order: ['claude-eu', 'openai-eu'] });
    const p = plan({ policy, request: { model: 'fast' } });
    expect(routeIds(p)).toEqual(['claude-eu/claude-haiku', 'openai-eu/gpt-4o-mini', 'openai-us/gpt-4o-mini']);
    expect(p.reasons).toContain('fallback order (account policy): claude-eu, openai-eu, openai-us');
  });

  it('refuses a model nobody offers as invalid_value, and a disabled provider counts as nobody', () => {
    expect(plan({ request: { model: 'gpt-9' } })).toMatchObject({ ok: false, code: 'invalid_value' });
    expect(plan({ request: { model: 'llama-3' } })).toMatchObject({ ok: false, code: 'invalid_value' });
  });

  it('with no provider registered, or every one switched off, refuses as provider_unavailable naming what the operator does, not the policy', () => {
    const none = plan({ providers: [], request: {} });
    expect(none).toMatchObject({ ok: false, code: 'provider_unavailable', retry_after_s: 60 });
    expect(!none.ok && none.message).toMatch(
      /no AI provider is configured on this gateway: the operator adds one with `gatehouse-cloud providers add /,
    );
    const off = plan({
      providers: [provider('openai-us', ['gpt-4o'], [], { enabled: false }), registry[3]!],
      request: { model: 'gpt-4o' },
    });
    expect(off).toMatchObject({ ok: false, code: 'provider_unavailable' });
    expect(!off.ok && off.message).toMatch(
      /switched off \(openai-us, local-lab\): the operator switches one on with `gatehouse-cloud providers enable ID`/,
    );
  });

  it('refuses as forbidden when the policy excludes every route that offers the model', () => {
    const policy = AccountAiPolicy.parse({ required_tags: ['eu'] });
    const p = plan({ policy, request: { model: 'gpt-4o' } });
    expect(p).toMatchObject({ ok: false, code: 'forbidden' });
    expect(!p.ok && p.message).toContain('tags eu');
  });

  it('does not mistake Object.prototype names for model classes', () => {
    for (const model of ['constructor', 'toString', 'hasOwnProperty'])
      expect(plan({ request: { model } })).toMatchObject({ ok: false, code: 'invalid_value' });
  });

  it('skips a provider whose breaker is open, and notes a half-open one', () => {
    let now = 0;
    const breakers = new BreakerBoard(() => now, { threshold: 2, cooldownMs: 30_000 });
    breakers.failure('openai-us');
    breakers.failure('openai-us');
    const p = plan({ request: { model: 'gpt-4o-mini' }, breaker: (id) => breakers.view(id), now });
    expect(routeIds(p)).toEqual(['openai-eu/gpt-4o-mini']);
    expect(p.reasons).toContain(
      'openai-us: skipped, cooling down after 2 consecutive failures until 1970-01-01T00:00:30.000Z',
    );
    now = 30_000;
    const later = plan({ request: { model: 'gpt-4o-mini' }, breaker: (id) => breakers.view(id), now });
    expect(routeIds(later)).toEqual(['openai-us/gpt-4o-mini', 'openai-eu/gpt-4o-mini']);
    expect(later.reasons).toContain('openai-us: cooldown over, one probe call allowed');
  });

  it('answers provider_unavailable with Retry-After when every allowed route is cooling down', () => {
    const breakers = new BreakerBoard(() => 0, { threshold: 1, cooldownMs: 12_500 });
    breakers.failure('openai-us');
    breakers.failure('openai-eu');
    const p = plan({ request: { model: 'gpt-4o-mini' }, breaker: (id) => breakers.view(id) });
    expect(p).toMatchObject({ ok: false, code: 'provider_unavailable', retry_after_s: 13 });
  });

  it('rejects registry entries and policies that could leak or confuse', () => {
    expect(ProviderRecord.safeParse({ ...registry[0], base_url: 'https://user:pw@x.example' }).success).toBe(false);
    expect(ProviderRecord.safeParse({ ...registry[0], base_url: 'file:///etc/passwd' }).success).toBe(false);
    expect(ProviderRecord.safeParse({ ...registry[0], api_key_env: 'lower; rm -rf' }).success).toBe(false);
    expect(ProviderRecord.safeParse({ ...registry[0], id: '__proto__' }).success).toBe(false);
    // zod drops an own "__proto__" key: it can neither become a class nor change the prototype.
    const parsed = ModelClasses.parse(JSON.parse('{"__proto__": ["x"], "fast": ["a"]}'));
    expect(Object.keys(parsed)).toEqual(['fast']);
    expect(Object.getPrototypeOf(parsed)).toBe(Object.prototype);
    expect(ModelClasses.safeParse({ 'not a name': ['x'] }).success).toBe(false);
    expect(AccountAiPolicy.safeParse({ allowed_providers: ['ok'], extra: 1 }).success).toBe(false);
  });
});
