import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { callProvider, type CallOptions, type ProviderTarget } from '../../../cloud/ai/providers/call-provider.ts';
import type { ProviderOutcome } from '../../../cloud/ai/providers/outcome.ts';
import type { GenerateInput } from '../../../cloud/ai/providers/wire-format.ts';
import { fixtureUsage } from '../../fixtures/ai-providers/behaviours.ts';
import {
  startAnthropicFixture,
  startOpenAiFixture,
  type FixtureProvider,
} from '../../fixtures/ai-providers/fixture-provider.ts';

// The two real adapters against local servers that speak each provider's wire
// format, streaming off and on, through every way a provider call can end.

const input = (over: Partial<GenerateInput> = {}): GenerateInput => ({
  model: 'model-a',
  max_tokens: 64,
  messages: [
    { role: 'system', content: 'Be brief.' },
    { role: 'user', content: 'Say hello' },
  ],
  ...over,
});
const INPUT_CHARS = 'Be brief.'.length + 'Say hello'.length;

function target(fx: FixtureProvider): { provider: ProviderTarget; opts: CallOptions } {
  return {
    provider: { id: `fx-${fx.kind}`, kind: fx.kind, base_url: fx.baseUrl, api_key_env: 'GATEHOUSE_TEST_AI_KEY' },
    opts: { env: { GATEHOUSE_TEST_AI_KEY: fx.key } },
  };
}

/** Nothing an adapter answers may carry the key or a recognisable piece of it. */
function expectNoKey(outcome: ProviderOutcome, key: string): void {
  const text = JSON.stringify(outcome);
  expect(text).not.toContain(key);
  expect(text).not.toContain(key.slice(0, 8));
  expect(text).not.toContain(key.slice(-8));
}

const kinds = [
  ['openai', startOpenAiFixture],
  ['anthropic', startAnthropicFixture],
] as const;

describe.each(kinds)('%s adapter', (kind, start) => {
  let fx: FixtureProvider;
  beforeAll(async () => {
    fx = await start();
  });
  afterAll(() => fx.close());

  const call = (over: Partial<GenerateInput> = {}, extra: CallOptions = {}): Promise<ProviderOutcome> => {
    const t = target(fx);
    return callProvider(t.provider, input(over), { ...t.opts, ...extra });
  };

  describe.each([false, true])('stream=%s', (stream) => {
    it('answers the text, the model and the provider-reported usage', async () => {
      const deltas: string[] = [];
      const out = await call({ stream }, { onText: (d) => deltas.push(d) });
      const usage = fixtureUsage(INPUT_CHARS, 'echo: Say hello');
      expect(out).toEqual({
        ok: true,
        text: 'echo: Say hello',
        model: 'model-a',
        tokens_input: usage.input,
        tokens_output: usage.output,
        estimated: false,
      });
      if (stream) expect(deltas.join('')).toBe('echo: Say hello');
      else expect(deltas).toEqual([]);
    });

    it('sends the wire format the provider expects', async () => {
      const before = fx.count;
      await call({ stream });
      const body = fx.requests[before]!.body as Record<string, unknown>;
      expect(fx.requests[before]!.key_ok).toBe(true);
      if (kind === 'anthropic') {
        expect(fx.requests[before]!.path).toBe('/v1/messages');
        expect(fx.requests[before]!.headers['anthropic-version']).toBe('2023-06-01');
        expect(body.system).toBe('Be brief.');
        expect(body.messages).toEqual([{ role: 'user', content: 'Say hello' }]);
      } else {
        expect(fx.requests[before]!.path).toBe('/v1/chat/completions');
        expect(body.messages).toEqual(input().messages);
        if (stream) expect(body.stream_options).toEqual({ include_usage: true });
      }
      expect(body.max_tokens).toBe(64);
      expect(body.stream === true).toBe(stream);
    });

    it('estimates usage when the provider reports none, and says so', async () => {
      fx.script({ kind: 'success', text: 'twelve chars', usage: null });
      const out = await call({ stream });
      expect(out).toMatchObject({
        ok: true,
        text: 'twelve chars',
        estimated: true,
        tokens_input: Math.ceil(INPUT_CHARS / 4),
        tokens_output: 3,
      });
    });

    it('maps 429 to a retryable rate_limited failure with Retry-After', async () => {
      fx.script({ kind: 'rate_limited', retry_after: '7' });
      const out = await call({ stream });
      expect(out).toMatchObject({
        ok: false,
        failure: { kind: 'rate_limited', retryable: true, status: 429, retry_after_s: 7 },
        tokens_input: 0,
        tokens_output: 0,
      });
    });

    it('maps 5xx (and 529 overloaded) to a retryable server_error', async () => {
      fx.script({ kind: 'server_error' }, { kind: 'server_error', status: 529 });
      expect(await call({ stream })).toMatchObject({
        ok: false,
        failure: { kind: 'server_error', retryable: true, status: 500 },
      });
      expect(await call({ stream })).toMatchObject({
        ok: false,
        failure: { kind: 'server_error', retryable: true, status: 529 },
      });
    });

    it('maps a body it cannot read to a retryable malformed failure', async () => {
      fx.script({ kind: 'malformed' });
      expect(await call({ stream })).toMatchObject({ ok: false, failure: { kind: 'malformed', retryable: true } });
    });

    it('maps a connection cut half way to a retryable disconnected failure', async () => {
      fx.script({ kind: 'disconnect' });
      const out = await call({ stream });
      expect(out).toMatchObject({ ok: false, failure: { kind: 'disconnected', retryable: true } });
      // A stream cut after it began has cost tokens: they are reported, not zero.
      if (stream) expect(out.tokens_input).toBeGreaterThan(0);
    });

    it('maps a 400 to a bad_request the caller must not retry', async () => {
      fx.script({ kind: 'bad_request', message: 'max_tokens: 64 > 32, the maximum for model-a' });
      const out = await call({ stream });
      expect(out).toMatchObject({ ok: false, failure: { kind: 'bad_request', retryable: false, status: 400 } });
      expect(!out.ok && out.failure.reason).toContain('max_tokens: 64 > 32');
    });

    it('refuses a wrong key as auth (not retryable) without repeating the key the provider echoed', async () => {
      const t = target(fx);
      const wrong = `${kind === 'openai' ? 'sk-' : 'sk-ant-'}wrongwrongwrong0123456789SECRET`;
      const out = await callProvider(t.provider, input({ stream }), { env: { GATEHOUSE_TEST_AI_KEY: wrong } });
      expect(out).toMatchObject({ ok: false, failure: { kind: 'auth', retryable: false, status: 401 } });
      expect(!out.ok && out.failure.reason).toContain('[redacted]');
      expectNoKey(out, wrong);
    });

    it('gives up at the overall timeout with a retryable timeout', async () => {
      fx.script({ kind: 'slow', delay_ms: 5_000 });
      const out = await call({ stream }, { timeoutMs: 150 });
      expect(out).toMatchObject({ ok: false, failure: { kind: 'timeout', retryable: true } });
    });

    it('stops when the caller aborts, and says it was not the provider', async () => {
      fx.script({ kind: 'hang' });
      const ac = new AbortController();
      const pending = call({ stream }, { signal: ac.signal });
      setTimeout(() => ac.abort(), 50);
      expect(await pending).toMatchObject({ ok: false, failure: { kind: 'aborted', retryable: false } });
    });
  });

  it('reads a stream delivered slowly, chunk by chunk, within the deadline', async () => {
    fx.script({ kind: 'success', text: 'a b c d e f', chunks: 6, chunk_delay_ms: 30 });
    expect(await call({ stream: true }, { timeoutMs: 5_000 })).toMatchObject({ ok: true, text: 'a b c d e f' });
  });

  it('times out a stream that stalls after it began, and reports the tokens seen', async () => {
    fx.script({ kind: 'stall' });
    const out = await call({ stream: true }, { timeoutMs: 300 });
    expect(out).toMatchObject({ ok: false, failure: { kind: 'timeout', retryable: true } });
    expect(out.tokens_input).toBeGreaterThan(0);
    expect(out.tokens_output).toBeGreaterThan(0);
  });

  it('maps an error event mid-stream to a retryable server_error', async () => {
    fx.script({ kind: 'stream_error' });
    const out = await call({ stream: true });
    expect(out).toMatchObject({ ok: false, failure: { kind: 'server_error', retryable: true } });
  });

  it('refuses an answer larger than the cap', async () => {
    fx.script({ kind: 'success', text: 'y'.repeat(50_000) });
    expect(await call({}, { maxAnswerBytes: 10_000 })).toMatchObject({
      ok: false,
      failure: { kind: 'malformed', retryable: true },
    });
  });

  it('says the key is not configured when its environment variable is empty, naming the variable only', async () => {
    const t = target(fx);
    const before = fx.count;
    const out = await callProvider(t.provider, input(), { env: {} });
    expect(out).toMatchObject({ ok: false, failure: { kind: 'not_configured', retryable: false } });
    expect(!out.ok && out.failure.reason).toContain('GATEHOUSE_TEST_AI_KEY');
    expect(fx.count).toBe(before);
  });

  it('refuses a key that would break the header instead of sending it', async () => {
    const t = target(fx);
    const out = await callProvider(t.provider, input(), { env: { GATEHOUSE_TEST_AI_KEY: 'sk-abcdefgh\r\nX-Evil: 1' } });
    expect(out).toMatchObject({ ok: false, failure: { kind: 'not_configured' } });
    expectNoKey(out, 'sk-abcdefgh\r\nX-Evil: 1');
  });

  it('never puts the key in any outcome', async () => {
    fx.script(
      { kind: 'rate_limited' },
      { kind: 'server_error' },
      { kind: 'malformed' },
      { kind: 'disconnect' },
      { kind: 'bad_request' },
    );
    for (let i = 0; i < 6; i++) expectNoKey(await call({ stream: i % 2 === 0 }), fx.key);
  });
});

describe('network failures', () => {
  let closedPort = 0;
  beforeAll(async () => {
    const s = http.createServer();
    await new Promise<void>((r) => s.listen(0, '127.0.0.1', r));
    closedPort = (s.address() as AddressInfo).port;
    await new Promise<void>((r) => s.close(() => r()));
  });

  it('maps a refused connection to a retryable network failure', async () => {
    const out = await callProvider(
      { id: 'gone', kind: 'openai', base_url: `http://127.0.0.1:${closedPort}/v1`, api_key_env: 'K' },
      input(),
      { env: { K: 'sk-0123456789abcdef' } },
    );
    expect(out).toMatchObject({ ok: false, failure: { kind: 'network', retryable: true } });
  });
});
