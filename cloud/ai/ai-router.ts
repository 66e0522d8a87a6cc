import type { AiGenerateRequest } from '../../main/contract/cloud/ai.ts';
import type { ProviderRecord } from './provider-record.ts';
import { callProvider, type CallOptions } from './providers/call-provider.ts';
import type { BreakerBoard } from './routing/breaker.ts';
import { executeRoutes, type ExecuteOptions, type ExecuteResult } from './routing/execute-routes.ts';
import { planRoutes, type RoutePlan } from './routing/plan-routes.ts';
import type { AccountAiPolicy, ModelClasses } from './routing/policy.ts';

/**
 * What `ai/route` and `ai/generate` call: the same plan for both, so the
 * answer of `ai/route` is exactly what `ai/generate` would try first. Part 2
 * supplies the stored registry and policy, its breaker board, and the quota
 * gates (`beforeHop` reserves, `afterHop` settles or releases).
 */

/** Used when a request names no max_tokens (Anthropic requires one; it also bounds the reservation). */
export const DEFAULT_MAX_TOKENS = 1024;

export interface AiRoutingContext {
  providers: readonly ProviderRecord[];
  policy: AccountAiPolicy;
  classes?: ModelClasses;
  breakers: BreakerBoard;
  now: number;
}

export function routeAi(ctx: AiRoutingContext, req: Pick<AiGenerateRequest, 'model' | 'tags'>): RoutePlan {
  return planRoutes({
    providers: ctx.providers,
    policy: ctx.policy,
    request: { model: req.model, tags: req.tags },
    now: ctx.now,
    breaker: (id) => ctx.breakers.view(id),
    ...(ctx.classes ? { classes: ctx.classes } : {}),
  });
}

/** Tokens a message may cost beyond its text (role, separators), and the answer's priming: generous for both wire formats. */
export const MESSAGE_OVERHEAD_TOKENS = 8;

/**
 * The most tokens this request can cost on one hop: what a hop reserves
 * before it calls, so concurrent generations cannot overshoot a budget.
 * An upper bound, not an estimate: no tokenizer makes more tokens than the
 * text has UTF-8 bytes (byte-level BPE at worst), plus each message's
 * overhead, plus every token it may generate (max_tokens, which the
 * provider enforces). The four-characters-a-token estimate can be beaten by
 * code or non-Latin text, and a settlement above the hold would overshoot.
 */
export function reservationFor(req: Pick<AiGenerateRequest, 'messages' | 'max_tokens'>): number {
  const bytes = req.messages.reduce((n, m) => n + Buffer.byteLength(m.content, 'utf8'), 0);
  return bytes + MESSAGE_OVERHEAD_TOKENS * (req.messages.length + 1) + (req.max_tokens ?? DEFAULT_MAX_TOKENS);
}

export interface GenerateOptions extends Pick<
  ExecuteOptions,
  'beforeHop' | 'afterHop' | 'signal' | 'hopSignal' | 'log'
> {
  /** ask providers to stream (the answer is the same; a stalled stream is noticed sooner) */
  stream?: boolean;
  call?: Omit<CallOptions, 'signal'>;
}

export type GenerateResult =
  { planned: false; plan: Extract<RoutePlan, { ok: false }> } | ({ planned: true; reasons: string[] } & ExecuteResult);

export async function generateAi(
  ctx: AiRoutingContext,
  req: AiGenerateRequest,
  opts: GenerateOptions = {},
): Promise<GenerateResult> {
  const plan = routeAi(ctx, req);
  if (!plan.ok) return { planned: false, plan };
  const maxTokens = req.max_tokens ?? DEFAULT_MAX_TOKENS;
  const result = await executeRoutes({
    routes: plan.routes,
    breakers: ctx.breakers,
    call: (route, signal) =>
      callProvider(
        route.provider,
        { model: route.model, messages: req.messages, max_tokens: maxTokens, stream: opts.stream ?? false },
        { ...opts.call, ...(signal ? { signal } : {}) },
      ),
    ...(opts.beforeHop ? { beforeHop: opts.beforeHop } : {}),
    ...(opts.afterHop ? { afterHop: opts.afterHop } : {}),
    ...(opts.signal ? { signal: opts.signal } : {}),
    ...(opts.hopSignal ? { hopSignal: opts.hopSignal } : {}),
    ...(opts.log ? { log: opts.log } : {}),
  });
  return { planned: true, reasons: plan.reasons, ...result };
}
