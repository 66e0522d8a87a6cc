import type { ProviderKind, ProviderRecord } from '../provider-record.ts';
import { anthropicFormat } from './anthropic-format.ts';
import { post, readText, TransportError, type PostResponse } from './http-post.ts';
import { openaiFormat } from './openai-format.ts';
import {
  estimateTokens,
  failed,
  failure,
  fromStatus,
  fromTransport,
  safeDetail,
  type ProviderFailure,
  type ProviderOutcome,
  type Usage,
} from './outcome.ts';
import { SseDecoder, SseTooLarge } from './sse.ts';
import type { Answer, GenerateInput, WireFormat } from './wire-format.ts';

/**
 * Calls one provider once and answers one typed outcome; it never throws for
 * anything the provider or the network does. The key is read from the
 * environment variable the registry names, at call time, and goes nowhere
 * but the request header: every reason that leaves here is scrubbed of it.
 */

export const FORMATS: Record<ProviderKind, WireFormat> = { openai: openaiFormat, anthropic: anthropicFormat };

export interface CallOptions {
  /** where keys are looked up; defaults to process.env */
  env?: Record<string, string | undefined>;
  connectTimeoutMs?: number;
  /** the whole call, streamed body included */
  timeoutMs?: number;
  /** the most bytes an answer (or an error body) may have */
  maxAnswerBytes?: number;
  signal?: AbortSignal;
  /** each piece of text as it streams in */
  onText?: (delta: string) => void;
}

export const CALL_DEFAULTS = { connectTimeoutMs: 5_000, timeoutMs: 60_000, maxAnswerBytes: 8 * 1024 * 1024 } as const;

/** Header-safe: visible ASCII only, so a key with a newline cannot split a header. */
const KEY_SHAPE = /^[\x21-\x7e]{8,1024}$/;

export type ProviderTarget = Pick<ProviderRecord, 'id' | 'kind' | 'base_url' | 'api_key_env'>;

export async function callProvider(
  provider: ProviderTarget,
  input: GenerateInput,
  opts: CallOptions = {},
): Promise<ProviderOutcome> {
  const env = opts.env ?? process.env;
  const key = env[provider.api_key_env];
  if (!key)
    return failed(
      failure(
        'not_configured',
        `the key of provider ${provider.id} is not configured (environment variable ${provider.api_key_env} is empty)`,
      ),
    );
  if (!KEY_SHAPE.test(key))
    return failed(
      failure(
        'not_configured',
        `the key of provider ${provider.id} in ${provider.api_key_env} is not a valid header value`,
      ),
    );

  const format = FORMATS[provider.kind];
  const scrub = (f: ProviderFailure): ProviderFailure => ({ ...f, reason: safeDetail(f.reason, key, 400) });
  const inputChars = input.messages.reduce((n, m) => n + m.content.length, 0);
  const usageOf = (a: Answer): Usage => {
    const estimated = a.usage.tokens_input === undefined || a.usage.tokens_output === undefined;
    return {
      tokens_input: a.usage.tokens_input ?? estimateTokens(inputChars),
      tokens_output: a.usage.tokens_output ?? estimateTokens(a.text.length),
      estimated,
    };
  };

  let res: PostResponse;
  try {
    res = await post({
      url: new URL(provider.base_url.replace(/\/+$/, '') + format.path),
      headers: format.headers(key),
      body: JSON.stringify(format.body(input)),
      connectTimeoutMs: opts.connectTimeoutMs ?? CALL_DEFAULTS.connectTimeoutMs,
      timeoutMs: opts.timeoutMs ?? CALL_DEFAULTS.timeoutMs,
      maxBodyBytes: opts.maxAnswerBytes ?? CALL_DEFAULTS.maxAnswerBytes,
      ...(opts.signal ? { signal: opts.signal } : {}),
    });
  } catch (e) {
    return failed(
      scrub(e instanceof TransportError ? fromTransport(e) : failure('network', 'could not reach the provider')),
    );
  }

  const zero: Usage = { tokens_input: 0, tokens_output: 0, estimated: false };
  let partial = (): Usage => zero;
  try {
    if (res.status < 200 || res.status >= 300) {
      const body = await readText(res.chunks);
      return failed(
        scrub(fromStatus(res.status, res.headers, safeDetail(format.errorMessage(parseJson(body)) ?? '', key))),
      );
    }
    const streamed = String(res.headers['content-type'] ?? '').startsWith('text/event-stream');
    if (!streamed) {
      // Also the path of a provider that ignored `stream: true` and answered in one piece.
      const answer = format.parseAnswer(parseJson(await readText(res.chunks)));
      if (typeof answer === 'string') return failed(failure('malformed', answer));
      return { ok: true, text: answer.text, model: answer.model || input.model, ...usageOf(answer) };
    }
    // Every non-empty text delta carries at least one token: more deltas than max_tokens is a provider
    // ignoring the bound, and we stop reading there (its answer so far is settled, flagged as an overrun).
    let deltas = 0;
    const reader = format.streamReader((d) => {
      if (d) deltas++;
      opts.onText?.(d);
    });
    const decoder = new SseDecoder();
    // Once the stream has begun the provider is spending tokens: a failure from here on reports them.
    partial = () => usageOf(reader.sofar());
    for await (const chunk of res.chunks) {
      for (const ev of decoder.push(chunk)) {
        const step = reader.onEvent(ev);
        const a = reader.sofar();
        const counted = Math.max(deltas, a.usage.tokens_output ?? 0);
        if (step !== 'done' && counted > input.max_tokens) {
          const u = usageOf(a);
          return {
            ok: true,
            text: a.text,
            model: a.model || input.model,
            ...u,
            tokens_output: Math.max(u.tokens_output, counted),
            overran: true,
          };
        }
        if (step === 'done') {
          return { ok: true, text: a.text, model: a.model || input.model, ...usageOf(a) };
        }
        if (step !== 'more') return failed(scrub(step), partial());
      }
    }
    return failed(
      failure('disconnected', 'the stream ended before the provider said the answer was complete'),
      partial(),
    );
  } catch (e) {
    if (e instanceof TransportError) return failed(scrub(fromTransport(e)), partial());
    if (e instanceof SseTooLarge) return failed(failure('malformed', e.message), partial());
    throw e;
  } finally {
    res.close();
  }
}

function parseJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}
