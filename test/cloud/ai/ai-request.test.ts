import { describe, expect, it } from 'vitest';
import { AI_LIMITS, AiGenerateRequest } from '../../../main/contract/cloud/ai.ts';

// The AI request shape a site sends (docs/cloud-gateway.md "AI"): what the worst
// values get. Everything is bounded before a provider, a log or the store sees it.

const ok = { product: 'aeo', feature: 'aeo.answers', messages: [{ role: 'user', content: 'hello' }] };
const refuse = (over: Record<string, unknown>) =>
  expect(AiGenerateRequest.safeParse({ ...ok, ...over }).success).toBe(false);

describe('AiGenerateRequest', () => {
  it('accepts the documented shape, tabs and newlines included', () => {
    const r = AiGenerateRequest.parse({
      ...ok,
      messages: [
        { role: 'system', content: 'Be brief.' },
        { role: 'user', content: 'a\tb\r\nc 😀' },
      ],
      model: 'claude-3-5-haiku-latest',
      max_tokens: 256,
      tags: ['eu'],
    });
    expect(r.messages).toHaveLength(2);
  });

  it('refuses control characters and lone surrogates in content', () => {
    refuse({ messages: [{ role: 'user', content: 'a\u0000b' }] });
    refuse({ messages: [{ role: 'user', content: 'a\u001bb' }] });
    refuse({ messages: [{ role: 'user', content: 'a\ud800b' }] });
    refuse({ messages: [{ role: 'user', content: '\udc00' }] });
  });

  it('refuses unknown roles and fields, a system-only conversation, and too many or too long messages', () => {
    refuse({ messages: [{ role: 'tool', content: 'x' }] });
    refuse({ messages: [{ role: 'user', content: 'x', name: 'y' }] });
    refuse({ extra: true });
    refuse({ messages: [{ role: 'system', content: 'only rules' }] });
    refuse({ messages: [] });
    refuse({ messages: Array.from({ length: AI_LIMITS.messages + 1 }, () => ({ role: 'user', content: 'x' })) });
    refuse({ messages: [{ role: 'user', content: 'x'.repeat(AI_LIMITS.content + 1) }] });
    refuse({ messages: Array.from({ length: 3 }, () => ({ role: 'user', content: 'x'.repeat(AI_LIMITS.content) })) });
  });

  it('refuses models, tags and token counts outside their shapes', () => {
    for (const model of ['', ' gpt', 'a'.repeat(129), '../x', 'gpt\n4']) refuse({ model });
    for (const tags of [['EU'], ['eu eu'], Array.from({ length: 17 }, (_, i) => `t${i}`)]) refuse({ tags });
    for (const max_tokens of [0, -1, 1.5, AI_LIMITS.maxTokens + 1]) refuse({ max_tokens });
  });

  it('gives an own __proto__ key no way in', () => {
    expect(
      AiGenerateRequest.safeParse(
        JSON.parse(
          '{"product":"aeo","feature":"aeo.answers","messages":[{"role":"user","content":"x"}],"__proto__":{"admin":true}}',
        ),
      ).success,
    ).toBe(false);
  });
});
