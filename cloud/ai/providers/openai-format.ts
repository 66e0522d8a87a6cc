import { z } from 'zod';
import { failure } from './outcome.ts';
import {
  errorMessageOf,
  type Answer,
  type GenerateInput,
  type ReportedUsage,
  type StreamReader,
  type WireFormat,
} from './wire-format.ts';

/**
 * The OpenAI-compatible chat completions wire format: `POST {base}/chat/completions`
 * with a bearer key; streamed as SSE `data:` chunks carrying
 * `choices[0].delta.content`, a last chunk with `usage` (when
 * `stream_options.include_usage` is set, its `choices` is empty) and
 * `data: [DONE]`.
 */

const Usage = z
  .object({ prompt_tokens: z.number().int().nonnegative(), completion_tokens: z.number().int().nonnegative() })
  .loose();

const Completion = z
  .object({
    model: z.string().max(256),
    choices: z.array(z.object({ message: z.object({ content: z.string().nullable() }).loose() }).loose()).min(1),
    usage: Usage.nullish(),
  })
  .loose();

const Chunk = z
  .object({
    model: z.string().max(256).optional(),
    choices: z
      .array(z.object({ delta: z.object({ content: z.string().nullish() }).loose().optional() }).loose())
      .optional(),
    usage: Usage.nullish(),
    error: z.object({ message: z.string().optional(), type: z.string().nullish() }).loose().optional(),
  })
  .loose();

function usageOf(u: z.infer<typeof Usage> | null | undefined): ReportedUsage {
  return u ? { tokens_input: u.prompt_tokens, tokens_output: u.completion_tokens } : {};
}

export const openaiFormat: WireFormat = {
  path: '/chat/completions',

  headers: (key) => ({
    authorization: `Bearer ${key}`,
    'content-type': 'application/json',
    accept: 'application/json, text/event-stream',
  }),

  body: (input: GenerateInput) => ({
    model: input.model,
    messages: input.messages.map((m) => ({ role: m.role, content: m.content })),
    max_tokens: input.max_tokens,
    ...(input.stream ? { stream: true, stream_options: { include_usage: true } } : {}),
  }),

  parseAnswer(json): Answer | string {
    const r = Completion.safeParse(json);
    if (!r.success) return 'the answer is not a chat completion';
    return { text: r.data.choices[0]!.message.content ?? '', model: r.data.model, usage: usageOf(r.data.usage) };
  },

  errorMessage: errorMessageOf,

  streamReader(onText): StreamReader {
    let text = '';
    let model = '';
    let usage: ReportedUsage = {};
    return {
      onEvent(ev) {
        if (ev.data === '[DONE]') return 'done';
        let json: unknown;
        try {
          json = JSON.parse(ev.data);
        } catch {
          return failure('malformed', 'a streamed chunk is not JSON');
        }
        const r = Chunk.safeParse(json);
        if (!r.success) return failure('malformed', 'a streamed chunk is not a chat completion chunk');
        const c = r.data;
        if (c.error) {
          // An error after the 200: the provider gave up mid-answer.
          const kind = c.error.type === 'invalid_request_error' ? 'bad_request' : 'server_error';
          return failure(kind, `the provider failed while streaming${c.error.message ? `: ${c.error.message}` : ''}`);
        }
        if (c.model) model = c.model;
        if (c.usage) usage = usageOf(c.usage);
        const delta = c.choices?.[0]?.delta?.content;
        if (delta) {
          text += delta;
          onText?.(delta);
        }
        return 'more';
      },
      sofar: () => ({ text, model, usage }),
    };
  },
};
