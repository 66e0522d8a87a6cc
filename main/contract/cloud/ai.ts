import { z } from 'zod';
import { lazySchema } from '../lazy-schema.ts';

/**
 * The AI request shape of docs/cloud-gateway.md "AI" (`ai/generate`, `ai/route`),
 * shared by the app's cloud client and the reference cloud gateway. Every
 * field a site sends is bounded here, so nothing unbounded reaches a provider,
 * a log or the store.
 */

export const AI_LIMITS = {
  messages: 200,
  /** characters of one message's content */
  content: 100_000,
  /** characters of all contents together (ai/generate needs a body limit of about 1 MB for this) */
  totalContent: 200_000,
  maxTokens: 100_000,
  tags: 16,
} as const;

/** The body limit of ai/generate and ai/route: 200,000 characters of content, up to 3 UTF-8 bytes each, plus JSON. */
export const AI_MAX_BODY_BYTES = 1024 * 1024;

/** No control characters but tab, newline and carriage return; no lone surrogates. */
// eslint-disable-next-line no-control-regex
const CONTROL = /[\u0000-\u0008\u000b\u000c\u000e-\u001f\u007f]/;
const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;
const text = (max: number) =>
  z
    .string()
    .max(max)
    .refine((s) => !LONE_SURROGATE.test(s), 'contains a lone surrogate')
    .refine((s) => !CONTROL.test(s), 'contains a control character');

/** A model id or a model class name, as providers spell them (`gpt-4o-mini`, `claude-3-5-haiku-latest`, `fast`). */
export const AiModelName = lazySchema(() =>
  z
    .string()
    .regex(
      /^[A-Za-z0-9][A-Za-z0-9._:/@-]{0,127}$/,
      'a model id or class: letters, digits and . _ : / @ -, at most 128',
    ),
);
/** An infrastructure or approval tag (`eu`, `approved`). */
export const AiTag = lazySchema(() =>
  z.string().regex(/^[a-z0-9][a-z0-9_-]{0,31}$/, 'a tag: lower-case letters, digits, _ and -, at most 32'),
);

export const AiRole = lazySchema(() => z.enum(['system', 'user', 'assistant']));
export type AiRole = z.infer<typeof AiRole>;

export const AiMessage = lazySchema(() => z.object({ role: AiRole, content: text(AI_LIMITS.content) }).strict());
export type AiMessage = z.infer<typeof AiMessage>;

export const AiGenerateRequest = lazySchema(() =>
  z
    .object({
      product: z.string().regex(/^[a-z][a-z0-9_-]{0,31}$/, 'a product id'),
      feature: z
        .string()
        .regex(/^[a-z0-9_-]+(\.[a-z0-9_-]+)*$/, 'a dotted feature key')
        .max(64),
      messages: z
        .array(AiMessage)
        .min(1)
        .max(AI_LIMITS.messages)
        .refine((ms) => ms.some((m) => m.role !== 'system'), 'needs at least one user or assistant message')
        .refine(
          (ms) => ms.reduce((n, m) => n + m.content.length, 0) <= AI_LIMITS.totalContent,
          `all contents together exceed ${AI_LIMITS.totalContent} characters`,
        ),
      model: AiModelName.optional(),
      max_tokens: z.number().int().positive().max(AI_LIMITS.maxTokens).optional(),
      tags: z.array(AiTag).max(AI_LIMITS.tags).optional(),
    })
    .strict(),
);
export type AiGenerateRequest = z.infer<typeof AiGenerateRequest>;

export const AiUsage = lazySchema(() =>
  z.object({
    tokens_input: z.number().int().nonnegative(),
    tokens_output: z.number().int().nonnegative(),
  }),
);
export type AiUsage = z.infer<typeof AiUsage>;

export const AiGenerateAnswer = lazySchema(() =>
  z.object({
    success: z.literal(true),
    text: z.string(),
    provider: z.string(),
    model: z.string(),
    usage: AiUsage,
    request_id: z.string(),
  }),
);
export type AiGenerateAnswer = z.infer<typeof AiGenerateAnswer>;

export const AiRouteAnswer = lazySchema(() =>
  z.object({
    success: z.literal(true),
    provider: z.string(),
    model: z.string(),
    reasons: z.array(z.string()),
  }),
);
export type AiRouteAnswer = z.infer<typeof AiRouteAnswer>;
