import { z } from 'zod';
import { failure, type FailureKind } from './outcome.ts';
import {
  errorMessageOf,
  type Answer,
  type GenerateInput,
  type ReportedUsage,
  type StreamReader,
  type WireFormat,
} from './wire-format.ts';

/**
 * The Anthropic messages wire format: `POST {base}/v1/messages` with
 * `x-api-key` and `anthropic-version`; system prompts go in the top-level
 * `system` field, not in `messages`. Streamed as named SSE events:
 * `message_start` (input tokens), `content_block_delta` (`text_delta`),
 * `message_delta` (cumulative output tokens), `message_stop`; `ping` any
 * time; `error` when the provider gives up mid-answer.
 */

export const ANTHROPIC_VERSION = '2023-06-01';

const Usage = z
  .object({
    input_tokens: z.number().int().nonnegative().optional(),
    output_tokens: z.number().int().nonnegative().optional(),
  })
  .loose();

const Message = z
  .object({
    model: z.string().max(256),
    content: z.array(z.object({ type: z.string(), text: z.string().optional() }).loose()),
    usage: Usage.optional(),
  })
  .loose();

const ErrorObject = z.object({ type: z.string().optional(), message: z.string().optional() }).loose();

const Event = z.discriminatedUnion('type', [
  z
    .object({
      type: z.literal('message_start'),
      message: z.object({ model: z.string().max(256).optional(), usage: Usage.optional() }).loose(),
    })
    .loose(),
  z.object({ type: z.literal('content_block_start') }).loose(),
  z
    .object({
      type: z.literal('content_block_delta'),
      delta: z.object({ type: z.string(), text: z.string().optional() }).loose(),
    })
    .loose(),
  z.object({ type: z.literal('content_block_stop') }).loose(),
  z.object({ type: z.literal('message_delta'), usage: Usage.optional() }).loose(),
  z.object({ type: z.literal('message_stop') }).loose(),
  z.object({ type: z.literal('ping') }).loose(),
  z.object({ type: z.literal('error'), error: ErrorObject }).loose(),
]);

const KNOWN_EVENTS = new Set<string>(Event.options.map((o) => o.shape.type.value));

/** Anthropic's error types, mapped onto ours (the HTTP status says the same for non-streamed errors). */
const ERROR_KINDS: Record<string, FailureKind> = {
  overloaded_error: 'server_error',
  api_error: 'server_error',
  rate_limit_error: 'rate_limited',
  authentication_error: 'auth',
  permission_error: 'auth',
  not_found_error: 'not_found',
  invalid_request_error: 'bad_request',
  request_too_large: 'bad_request',
};

const textOf = (blocks: Array<{ type: string; text?: string | undefined }>): string =>
  blocks
    .filter((b) => b.type === 'text')
    .map((b) => b.text ?? '')
    .join('');

export const anthropicFormat: WireFormat = {
  path: '/v1/messages',

  headers: (key) => ({
    'x-api-key': key,
    'anthropic-version': ANTHROPIC_VERSION,
    'content-type': 'application/json',
    accept: 'application/json, text/event-stream',
  }),

  body(input: GenerateInput) {
    const system = input.messages.filter((m) => m.role === 'system').map((m) => m.content);
    return {
      model: input.model,
      max_tokens: input.max_tokens,
      ...(system.length ? { system: system.join('\n\n') } : {}),
      messages: input.messages.filter((m) => m.role !== 'system').map((m) => ({ role: m.role, content: m.content })),
      ...(input.stream ? { stream: true } : {}),
    };
  },

  parseAnswer(json): Answer | string {
    const r = Message.safeParse(json);
    if (!r.success) return 'the answer is not a message';
    return {
      text: textOf(r.data.content),
      model: r.data.model,
      usage: { tokens_input: r.data.usage?.input_tokens, tokens_output: r.data.usage?.output_tokens },
    };
  },

  errorMessage: errorMessageOf,

  streamReader(onText): StreamReader {
    let text = '';
    let model = '';
    const usage: ReportedUsage = {};
    return {
      onEvent(ev) {
        let json: unknown;
        try {
          json = JSON.parse(ev.data);
        } catch {
          return failure('malformed', `the streamed ${ev.event} event is not JSON`);
        }
        const type = (json as { type?: unknown } | null)?.type;
        // Event types added after this adapter was written are skipped, as the API's versioning policy asks.
        if (typeof type === 'string' && !KNOWN_EVENTS.has(type)) return 'more';
        const r = Event.safeParse(json);
        if (!r.success) return failure('malformed', `the streamed ${ev.event} event has an unexpected shape`);
        const e = r.data;
        switch (e.type) {
          case 'message_start':
            if (e.message.model) model = e.message.model;
            if (e.message.usage?.input_tokens !== undefined) usage.tokens_input = e.message.usage.input_tokens;
            if (e.message.usage?.output_tokens !== undefined) usage.tokens_output = e.message.usage.output_tokens;
            return 'more';
          case 'content_block_delta':
            if (e.delta.type === 'text_delta' && e.delta.text) {
              text += e.delta.text;
              onText?.(e.delta.text);
            }
            return 'more';
          case 'message_delta':
            // Counts here are cumulative: the last one is the total.
            if (e.usage?.output_tokens !== undefined) usage.tokens_output = e.usage.output_tokens;
            if (e.usage?.input_tokens !== undefined) usage.tokens_input = e.usage.input_tokens;
            return 'more';
          case 'message_stop':
            return 'done';
          case 'error': {
            const kind = ERROR_KINDS[e.error.type ?? ''] ?? 'server_error';
            return failure(
              kind,
              `the provider failed while streaming (${e.error.type ?? 'error'})${e.error.message ? `: ${e.error.message}` : ''}`,
            );
          }
          default:
            return 'more';
        }
      },
      sofar: () => ({ text, model, usage: { ...usage } }),
    };
  },
};
