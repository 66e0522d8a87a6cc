/**
 * An account's enterprise policy in two layers: what the operator set
 * (`gatehouse-cloud accounts policy set`) and what the account set itself
 * (`enterprise/policy`). The account can only narrow the operator's layer,
 * as its own limits only add to the plan's: the providers allowed are those
 * both allow, the tags required and the features off are those either names,
 * and the account's fallback order (an order, not a permission) is used when
 * it gives one. Pure: the repository stores both layers and the result.
 */
export interface PolicyLayer {
  /** null or absent: this layer does not restrict providers */
  allowed_providers?: string[] | null;
  required_tags?: string[];
  fallback_order?: string[];
  features_off?: string[];
}

export interface EffectivePolicy {
  allowed_providers: string[] | null;
  required_tags: string[];
  fallback_order: string[];
  features_off: string[];
}

const union = (a: readonly string[] = [], b: readonly string[] = []) => [...new Set([...a, ...b])];

export function layerPolicies(operator: PolicyLayer, account: PolicyLayer): EffectivePolicy {
  const op = operator.allowed_providers ?? null;
  const own = account.allowed_providers ?? null;
  return {
    allowed_providers: op === null ? own : own === null ? op : op.filter((p) => own.includes(p)),
    required_tags: union(operator.required_tags, account.required_tags),
    fallback_order: account.fallback_order?.length ? account.fallback_order : (operator.fallback_order ?? []),
    features_off: union(operator.features_off, account.features_off),
  };
}

/** Changes only the fields given (undefined: unchanged). */
export function mergeLayer(layer: PolicyLayer, change: PolicyLayer): PolicyLayer {
  const out: PolicyLayer = { ...layer };
  for (const k of ['allowed_providers', 'required_tags', 'fallback_order', 'features_off'] as const) {
    if (change[k] !== undefined) (out as Record<string, unknown>)[k] = change[k];
  }
  return out;
}

/** Providers the account names that the operator's layer does not allow: asking for them would widen the policy. */
export function wideningProviders(operator: PolicyLayer, wanted: readonly string[] | null | undefined): string[] {
  const op = operator.allowed_providers ?? null;
  // null: the account lifts only its own restriction; the operator's still holds.
  if (op === null || wanted === undefined || wanted === null) return [];
  return wanted.filter((p) => !op.includes(p));
}
