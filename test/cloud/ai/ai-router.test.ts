import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { AiGenerateRequest } from '../../../main/contract/cloud/ai.ts';
import { generateAi, reservationFor, routeAi, type AiRoutingContext } from '../../../cloud/ai/ai-router.ts';
import { BreakerBoard } from '../../../cloud/ai/routing/breaker.ts';
import { AccountAiPolicy } from '../../../cloud/ai/routing/policy.ts';
import {
  startAnthropicFixture,
  startOpenAiFixture,
  type FixtureProvider,
} from '../../fixtures/ai-providers/fixture-provider.ts';

// ai/route and ai/generate as the gateway's AI routes call them: one plan for both, and
// the quota gates (beforeHop reserves, afterHop settles) holding a token
// budget under concurrent generations with fallbacks.

let eu: FixtureProvider;
let backup: FixtureProvider;
let ctx: AiRoutingContext;
let env: Record<string, string>;

beforeAll(async () => {
  [eu, backup] = await Promise.all([startOpenAiFixture(), startAnthropicFixture()]);
  env = { KEY_EU: eu.key, KEY_BACKUP: backup.key };
  ctx = {
    providers: [
      {
        id: 'openai-eu',
        kind: 'openai',
        base_url: eu.baseUrl,
        api_key_env: 'KEY_EU',
        models: ['small-1'],
        tags: ['eu'],
        enabled: true,
      },
      {
        id: 'claude-eu',
        kind: 'anthropic',
        base_url: backup.baseUrl,
        api_key_env: 'KEY_BACKUP',
        models: ['haiku-1'],
        tags: ['eu'],
        enabled: true,
      },
    ],
    policy: AccountAiPolicy.parse({ required_tags: ['eu'] }),
    classes: { fast: ['small-1', 'haiku-1'] },
    breakers: new BreakerBoard(),
    now: Date.now(),
  };
});
afterAll(() => Promise.all([eu.close(), backup.close()]));

const req = (over: Partial<AiGenerateRequest> = {}): AiGenerateRequest => ({
  product: 'aeo',
  feature: 'aeo.answers',
  model: 'fast',
  max_tokens: 40,
  messages: [{ role: 'user', content: 'Name one colour.' }],
  ...over,
});

describe('routeAi and generateAi', () => {
  it('answers with the route ai/route named first, and its reasons', async () => {
    const route = routeAi(ctx, req());
    expect(route.ok && route.routes[0]).toMatchObject({ provider: { id: 'openai-eu' }, model: 'small-1' });
    const gen = await generateAi(ctx, req(), { call: { env } });
    expect(gen).toMatchObject({
      planned: true,
      ok: true,
      text: 'echo: Name one colour.',
      model: 'small-1',
      route: { provider: { id: 'openai-eu' } },
    });
    expect(gen.planned && gen.reasons).toEqual(route.reasons);
  });

  it('does not call anyone when the plan refuses', async () => {
    const before = eu.count + backup.count;
    expect(await generateAi(ctx, req({ model: 'gpt-9' }), { call: { env } })).toMatchObject({
      planned: false,
      plan: { code: 'invalid_value' },
    });
    expect(eu.count + backup.count).toBe(before);
  });

  it('reserves an upper bound: the UTF-8 bytes of the input, the overhead of each message, and max_tokens', () => {
    expect(reservationFor(req())).toBe('Name one colour.'.length + 8 * 2 + 40);
    expect(reservationFor({ messages: [{ role: 'user', content: 'x'.repeat(8) }] })).toBe(8 + 16 + 1024);
    // Three bytes a character: text that tokenizes worse than four characters a token is still covered.
    expect(
      reservationFor({
        messages: [
          { role: 'system', content: 'Translate' },
          { role: 'user', content: '翻訳' },
        ],
        max_tokens: 10,
      }),
    ).toBe(9 + 6 + 8 * 3 + 10);
  });

  it('never lets concurrent generations with fallbacks overshoot one token budget', async () => {
    // A budget for three reservations; 8 generations at once; the first provider fails every other call, so half of them take a second hop.
    const r = req();
    const budget = 3 * reservationFor(r);
    let committed = 0; // reserved + settled, as the gateway keeps it in SQL
    let peak = 0;
    eu.setDefault({ kind: 'success' });
    eu.script(
      ...Array.from({ length: 8 }, (_, i) =>
        i % 2 ? { kind: 'server_error' as const } : { kind: 'slow' as const, delay_ms: 30 },
      ),
    );
    const results = await Promise.all(
      Array.from({ length: 8 }, () => {
        let held = 0;
        return generateAi(ctx, r, {
          call: { env },
          beforeHop: () => {
            // The re-check before every hop: a fallback must fit the budget too.
            if (committed + reservationFor(r) > budget) throw new Error('quota_exceeded');
            committed += reservationFor(r);
            held = reservationFor(r);
            peak = Math.max(peak, committed);
          },
          afterHop: (_route, out) => {
            committed += out.tokens_input + out.tokens_output - held;
            held = 0;
          },
        });
      }),
    );
    expect(peak).toBeLessThanOrEqual(budget);
    expect(committed).toBeLessThanOrEqual(budget);
    const stopped = results.filter((x) => x.planned && !x.ok && x.outcome === 'stopped');
    const answered = results.filter((x) => x.planned && x.ok);
    expect(answered.length).toBeGreaterThan(0);
    expect(stopped.length).toBeGreaterThan(0);
    expect(answered.length + stopped.length).toBe(8);
    eu.setDefault({ kind: 'success' });
  });
});
