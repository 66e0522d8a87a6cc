import type { ProviderRecord } from '../provider-record.ts';
import type { BreakerView } from './breaker.ts';
import { classModels, type AccountAiPolicy, type ModelClasses } from './policy.ts';

/**
 * Which provider and model a request would use, in the order to try them,
 * and the policy steps that decided (`ai/route`'s `reasons`). Pure: the
 * registry, the account's policy, the model classes and each provider's
 * breaker are values passed in. Reasons go to the site, so they name only
 * providers its policy allows and never a URL or a key's variable.
 */

export interface RouteRequest {
  /** a model id, a model class, or nothing (the `default` class, else each provider's first model) */
  model?: string | undefined;
  /** tags this request needs on top of the account's (a site can narrow, never widen) */
  tags?: string[] | undefined;
}

export interface PlanInput {
  providers: readonly ProviderRecord[];
  policy: AccountAiPolicy;
  request: RouteRequest;
  classes?: ModelClasses;
  breaker?: (providerId: string) => BreakerView;
  now: number;
}

export interface Route {
  provider: ProviderRecord;
  model: string;
}

export type RoutePlan =
  | { ok: true; routes: Route[]; reasons: string[] }
  | {
      ok: false;
      /** invalid_value: nobody offers the model; forbidden: the policy excludes every route; provider_unavailable: every allowed route is cooling down */
      code: 'invalid_value' | 'forbidden' | 'provider_unavailable';
      message: string;
      reasons: string[];
      retry_after_s?: number;
    };

const list = (xs: readonly string[]): string => xs.join(', ');
/** How long a site waits before asking again when the gateway has no provider at all (an operator must act first). */
export const NO_PROVIDER_RETRY_S = 60;

export function planRoutes(input: PlanInput): RoutePlan {
  const { policy, request, now } = input;
  const classes = input.classes ?? {};
  const reasons: string[] = [];
  const enabled = input.providers.filter((p) => p.enabled);

  // 0. Nothing to route to at all: the operator's to fix, not the account's policy.
  if (enabled.length === 0) {
    const what = input.providers.length
      ? `every AI provider registered on this gateway is switched off (${list(input.providers.map((p) => p.id))})`
      : 'no AI provider is configured on this gateway';
    const fix = input.providers.length
      ? 'the operator switches one on with `gatehouse-cloud providers enable ID`'
      : 'the operator adds one with `gatehouse-cloud providers add ID --kind openai|anthropic --base-url URL --api-key-env VAR --models a,b`';
    return {
      ok: false,
      code: 'provider_unavailable',
      message: `${what}: ${fix}`,
      reasons: [what],
      retry_after_s: NO_PROVIDER_RETRY_S,
    };
  }

  // 1. What the request asks for: a model, a class, or the defaults.
  const wanted = wantedModels(request.model, enabled, classes);
  if (!wanted)
    return {
      ok: false,
      code: 'invalid_value',
      message: `no provider offers model "${request.model}"; ai/models lists the models you may use`,
      reasons,
    };

  // 2. The account's allowed providers.
  const allowedSet = policy.allowed_providers ? new Set(policy.allowed_providers) : null;
  const allowed = allowedSet ? enabled.filter((p) => allowedSet.has(p.id)) : enabled;
  reasons.push(
    allowedSet
      ? `account policy allows providers: ${list(allowed.map((p) => p.id)) || 'none'}`
      : 'account policy allows every provider',
  );

  // 3. Approved infrastructure: every required tag, the account's and the request's.
  const tags = [...new Set([...policy.required_tags, ...(request.tags ?? [])])];
  let candidates = allowed;
  if (tags.length) {
    const missing = (p: ProviderRecord): string[] => tags.filter((t) => !p.tags.includes(t));
    const excluded = candidates.filter((p) => missing(p).length > 0);
    candidates = candidates.filter((p) => missing(p).length === 0);
    reasons.push(
      `required tags ${list(tags)}: ${excluded.length ? `excluded ${list(excluded.map((p) => `${p.id} (lacks ${list(missing(p))})`))}` : 'every allowed provider has them'}`,
    );
  }

  // 4. The model: who offers it, in the class's order when it is a class.
  reasons.push(wanted.reason);
  const rank = (id: string): number => {
    const i = policy.fallback_order.indexOf(id);
    return i === -1 ? policy.fallback_order.length + input.providers.findIndex((p) => p.id === id) : i;
  };
  let routes: Route[] = [];
  for (const p of candidates) {
    const models = wanted.models === 'default' ? [p.models[0]!] : wanted.models.filter((m) => p.models.includes(m));
    for (const model of models) routes.push({ provider: p, model });
  }
  const modelRank = (m: string): number => (wanted.models === 'default' ? 0 : wanted.models.indexOf(m));
  routes.sort((a, b) => rank(a.provider.id) - rank(b.provider.id) || modelRank(a.model) - modelRank(b.model));
  if (routes.length === 0) {
    return {
      ok: false,
      code: 'forbidden',
      message: `no provider your account's policy allows${tags.length ? ` (tags ${list(tags)})` : ''} offers ${describeWanted(request.model)}`,
      reasons,
    };
  }

  // 5. The order: the account's fallback order first, then the registry's.
  const order = [...new Set(routes.map((r) => r.provider.id))];
  reasons.push(
    policy.fallback_order.length
      ? `fallback order (account policy): ${list(order)}`
      : `fallback order (registry): ${list(order)}`,
  );

  // 6. Breakers: a provider cooling down after consecutive failures is skipped.
  if (input.breaker) {
    const cooling = new Map<string, number>();
    const noted = new Set<string>();
    routes = routes.filter((r) => {
      const id = r.provider.id;
      const b = input.breaker!(id);
      if (!noted.has(id)) {
        noted.add(id);
        if (b.phase === 'half_open') reasons.push(`${id}: cooldown over, one probe call allowed`);
        if (b.phase === 'open') {
          cooling.set(id, b.retry_at ?? now);
          reasons.push(
            `${id}: skipped, cooling down after ${b.failures} consecutive failures until ${new Date(b.retry_at ?? now).toISOString()}`,
          );
        }
      }
      return b.phase !== 'open';
    });
    if (routes.length === 0) {
      const soonest = Math.min(...cooling.values());
      return {
        ok: false,
        code: 'provider_unavailable',
        message: 'every provider your request may use is cooling down after repeated failures',
        reasons,
        retry_after_s: Math.max(1, Math.ceil((soonest - now) / 1000)),
      };
    }
  }

  reasons.push(`route: ${list(routes.map((r) => `${r.provider.id}/${r.model}`))}`);
  return { ok: true, routes, reasons };
}

function wantedModels(
  model: string | undefined,
  enabled: readonly ProviderRecord[],
  classes: ModelClasses,
): { models: string[] | 'default'; reason: string } | null {
  if (model === undefined) {
    const def = classModels(classes, 'default');
    return def
      ? { models: def, reason: `no model requested: class default (${list(def)})` }
      : { models: 'default', reason: "no model requested: each provider's default model" };
  }
  // An exact model id wins over a class of the same name.
  if (enabled.some((p) => p.models.includes(model))) return { models: [model], reason: `model ${model} requested` };
  const members = classModels(classes, model);
  if (members) return { models: members, reason: `model class ${model}: ${list(members)}` };
  return null;
}

function describeWanted(model: string | undefined): string {
  return model === undefined ? 'a model' : `model "${model}"`;
}
