import type { AiGenerateRequest } from '../../main/contract/cloud/index.ts';
import { FEATURE_CATALOG, type CloudProduct } from '../../main/contract/cloud/index.ts';
import { uuidv7 } from '../../main/lib/ids.ts';
import { DEFAULT_MAX_TOKENS, generateAi, reservationFor, routeAi, type AiRoutingContext } from '../ai/ai-router.ts';
import { publicProviderView, type ProviderRecord } from '../ai/provider-record.ts';
import type { RoutePlan } from '../ai/routing/plan-routes.ts';
import { classModels } from '../ai/routing/policy.ts';
import { CloudError } from '../errors.ts';
import { aiPolicyOf } from '../repo/policies-repo.ts';
import { routingData, type RoutingData } from '../repo/providers-repo.ts';
import type { SiteRow } from '../repo/sites-repo.ts';
import { recordProviderCall } from '../metrics.ts';
import type { Ctx } from './context.ts';
import { requireFeature } from './entitlements-service.ts';
import { loadGrants } from './grants-service.ts';
import { release, reserve, settleDurably, type Reservation, type SettleOptions } from './reservations-service.ts';
import { claimDeferredNonce } from './auth-service.ts';

/**
 * ai/providers, ai/models, ai/route and ai/generate for a signed site, on
 * the routing of cloud/ai (one plan for route and generate) with the
 * registry and the account's policy from the database. A generation holds
 * an upper bound of its tokens against every quota before each hop (in SQL,
 * with the limit check in the UPDATE), settles to the provider's count and
 * records `ai.generation.completed` in the same transaction, and releases
 * the hold when a hop fails, times out or the site goes away.
 */

export const AI_FEATURE = 'ai.generate';

/** The gates before any routing: the license, the product and the feature asked for, and cloud AI itself. */
async function gate(
  ctx: Ctx,
  site: SiteRow,
  req?: Pick<AiGenerateRequest, 'product' | 'feature'>,
): Promise<CloudProduct | null> {
  const g = await loadGrants(ctx.db, site, ctx.now());
  let product: CloudProduct | null = null;
  if (req) {
    const def = FEATURE_CATALOG.find((f) => f.key === req.feature);
    if (!def) throw new CloudError('invalid_request', `unknown feature '${req.feature}': GET features lists them`);
    if (def.product !== req.product)
      throw new CloudError(
        'invalid_request',
        `feature '${req.feature}' belongs to product '${def.product}', not '${req.product}'`,
      );
    await requireFeature(ctx, g, req.feature);
    product = def.product;
  }
  if (req?.feature !== AI_FEATURE) await requireFeature(ctx, g, AI_FEATURE);
  return product;
}

/** Enabled providers the account's policy lets the site use: allowed ids, carrying every required tag. */
function allowedProviders(d: RoutingData): ProviderRecord[] {
  const policy = aiPolicyOf(d.policy);
  const allowed = policy.allowed_providers ? new Set(policy.allowed_providers) : null;
  return d.providers.filter(
    (p) => p.enabled && (!allowed || allowed.has(p.id)) && policy.required_tags.every((t) => p.tags.includes(t)),
  );
}

export async function aiProviders(ctx: Ctx, site: SiteRow) {
  await gate(ctx, site);
  const d = await routing(ctx, site);
  return { success: true as const, providers: allowedProviders(d).map(publicProviderView) };
}

export async function aiModels(ctx: Ctx, site: SiteRow) {
  await gate(ctx, site);
  const d = await routing(ctx, site);
  const byModel = new Map<string, ProviderRecord[]>();
  for (const p of allowedProviders(d)) for (const m of p.models) byModel.set(m, [...(byModel.get(m) ?? []), p]);
  const models = [...byModel].map(([id, ps]) => ({
    id,
    provider: ps[0]!.id,
    providers: ps.map((p) => p.id),
    tags: [...new Set(ps.flatMap((p) => p.tags))],
  }));
  const classes = Object.keys(d.classes)
    .map((name) => ({ name, models: (classModels(d.classes, name) ?? []).filter((m) => byModel.has(m)) }))
    .filter((c) => c.models.length > 0);
  return { success: true as const, models, classes };
}

/** The registry, the account's policy and the model classes, kept per instance while the 'ai' config version holds. */
const routing = (ctx: Ctx, site: SiteRow): Promise<RoutingData> =>
  ctx.cache.get(`ai|${site.account_id ?? ''}`, site.snapshot?.config.ai, () => routingData(ctx.db, site.account_id));

function routingContext(ctx: Ctx, d: RoutingData): AiRoutingContext {
  ctx.ai.breakers.retain(d.providers.map((p) => p.id));
  return {
    providers: d.providers,
    policy: aiPolicyOf(d.policy),
    classes: d.classes,
    breakers: ctx.ai.breakers,
    now: ctx.now().getTime(),
  };
}

function planRefusal(plan: Extract<RoutePlan, { ok: false }>): CloudError {
  if (plan.code === 'invalid_value') return new CloudError('invalid_request', plan.message, { reasons: plan.reasons });
  if (plan.code === 'forbidden') return new CloudError('forbidden', plan.message, { reasons: plan.reasons });
  const retry = plan.retry_after_s ?? 5;
  return new CloudError(
    'provider_unavailable',
    plan.message,
    { reasons: plan.reasons, retry_after_s: retry },
    { retryAfter: retry },
  );
}

export async function aiRoute(ctx: Ctx, site: SiteRow, req: AiGenerateRequest) {
  await gate(ctx, site, req);
  const plan = routeAi(routingContext(ctx, await routing(ctx, site)), req);
  if (!plan.ok) throw planRefusal(plan);
  const first = plan.routes[0]!;
  return {
    success: true as const,
    provider: first.provider.id,
    model: first.model,
    reasons: plan.reasons,
    fallbacks: plan.routes.slice(1).map((r) => ({ provider: r.provider.id, model: r.model })),
  };
}

/** The site went away before the answer: nothing is sent, the hold is already released. */
export class ClientGone extends Error {}

export interface GenerateCall {
  requestId: string;
  /** aborted when the site closes the connection */
  signal?: AbortSignal;
}

export async function aiGenerate(ctx: Ctx, site: SiteRow, req: AiGenerateRequest, call: GenerateCall) {
  try {
    return await generate(ctx, site, req, call);
  } finally {
    // A refusal before any hold (gate, plan, quota) claims the nonce here: a replay can never act later.
    await claimDeferredNonce(ctx, site);
  }
}

async function generate(ctx: Ctx, site: SiteRow, req: AiGenerateRequest, call: GenerateCall) {
  const product = (await gate(ctx, site, req))!;
  const rctx = routingContext(ctx, await routing(ctx, site));
  const amount = reservationFor(req);
  const maxTokens = req.max_tokens ?? DEFAULT_MAX_TOKENS;
  const deadline = AbortSignal.timeout(ctx.ai.deadlineMs);
  // The site going away stops the walk, not a call in flight: what the provider answers is still settled and recorded.
  const walk = call.signal ? AbortSignal.any([call.signal, deadline]) : deadline;
  let held: Reservation | null = null;

  const result = await generateAi(rctx, req, {
    signal: walk,
    hopSignal: ctx.ai.halt ? AbortSignal.any([deadline, ctx.ai.halt]) : deadline,
    log: ctx.log,
    call: { env: ctx.ai.env, timeoutMs: ctx.ai.hopTimeoutMs },
    // Every hop, the first included, holds the upper bound against every limit first: a fallback can never escape a budget.
    beforeHop: async () => {
      held = await reserve(ctx, site, 'ai_tokens', amount, undefined, site.nonce);
    },
    afterHop: async (route, out) => {
      const r = held!;
      held = null;
      recordProviderCall(route.provider.id, out.ok ? 'ok' : 'error');
      const spent = out.tokens_input + out.tokens_output;
      if (!out.ok && spent === 0)
        return void (await release(ctx, r.id).catch((e) =>
          ctx.log.warn('could not release an AI hold: the sweeper will', { reservation_id: r.id, error: String(e) }),
        ));
      const event = {
        event_id: uuidv7(ctx.now().getTime()),
        // A failed stream that had begun spent tokens too: recorded, under its own name.
        event: out.ok ? 'ai.generation.completed' : 'ai.generation.failed',
        site_id: site.id,
        product,
        feature: req.feature,
        model: (out.ok ? out.model : route.model).slice(0, 100),
        units: 1,
        tokens_input: out.tokens_input,
        tokens_output: out.tokens_output,
        timestamp: ctx.now().toISOString(),
      };
      let overshoot: SettleOptions['overshoot'];
      if (out.tokens_output > maxTokens || spent > r.amount) {
        overshoot = {
          provider: route.provider.id,
          allowed_output: maxTokens,
          reported_output: out.tokens_output,
          held: r.amount,
          reported_total: spent,
        };
        ctx.ai.breakers.trip(route.provider.id);
        ctx.log.warn(
          'an AI provider answered more tokens than it was allowed: recorded as reported, counted up to its hold, its breaker opened',
          { site_id: site.id, ...overshoot },
        );
      }
      await settleDurably(ctx, site, r, event, { cap: r.amount, ...(overshoot ? { overshoot } : {}) });
    },
  });

  if (!result.planned) throw planRefusal(result.plan);
  if (result.ok) {
    if (call.signal?.aborted) throw new ClientGone('the site closed the connection');
    return {
      success: true as const,
      text: result.text,
      provider: result.route.provider.id,
      model: result.model,
      usage: { tokens_input: result.tokens_input, tokens_output: result.tokens_output },
      request_id: call.requestId,
    };
  }
  if (result.outcome === 'stopped') throw result.error;
  if (result.outcome === 'refused') throw new CloudError('invalid_request', result.message);
  if (result.outcome === 'aborted') {
    if (!deadline.aborted) throw new ClientGone('the site closed the connection');
    throw new CloudError(
      'provider_unavailable',
      `no AI provider answered within ${Math.round(ctx.ai.deadlineMs / 1000)} s`,
      { retry_after_s: 5 },
      { retryAfter: 5 },
    );
  }
  throw new CloudError(
    'provider_unavailable',
    result.message,
    { retry_after_s: result.retry_after_s },
    { retryAfter: result.retry_after_s },
  );
}
