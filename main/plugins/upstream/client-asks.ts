import type { CallContext, ClientAsk } from '../../core/calls/tool.ts';
import { GatehouseError } from '../../core/errors.ts';

/** The requests an upstream may send (2025 era) or embed (2026-07-28 `inputRequests`) that Gatehouse passes to its client. */
export const PASSED_METHODS = ['elicitation/create', 'sampling/createMessage'] as const;

type Caps = Readonly<Record<string, unknown>> | undefined;
const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

/** `elicitation/create:form`, `elicitation/create:url`, `sampling/createMessage`: what the audit and the errors name, never a value. */
export function askLabel(ask: ClientAsk): string {
  if (ask.method === 'elicitation/create') return `elicitation/create:${ask.params.mode === 'url' ? 'url' : 'form'}`;
  return ask.method.slice(0, 60);
}

/**
 * The capability a client must have declared for this request, when it did
 * not; null when it did. An `elicitation: {}` without modes is form mode only
 * (the spec's reading for clients of 2025-06-18); sampling with tools needs
 * `sampling.tools`.
 */
export function missingCapability(ask: ClientAsk, caps: Caps): string | null {
  if (ask.method === 'elicitation/create') {
    const e = caps?.elicitation;
    if (!isObject(e)) return 'elicitation';
    if (ask.params.mode === 'url') return isObject(e.url) ? null : 'elicitation.url';
    return isObject(e.form) || (!('url' in e) && !('form' in e)) ? null : 'elicitation.form';
  }
  if (ask.method === 'sampling/createMessage') {
    const s = caps?.sampling;
    if (!isObject(s)) return 'sampling';
    return ask.params.tools !== undefined && !isObject(s.tools) ? 'sampling.tools' : null;
  }
  return ask.method.slice(0, 60);
}

/** The refusal a client without the capability gets (the call fails with it; the upstream is told the same). */
export function capabilityMissing(upstream: string, ask: ClientAsk, capability: string): GatehouseError {
  return new GatehouseError(
    'client_capability_missing',
    `upstream '${upstream}' asks the client for ${askLabel(ask)} during this call, but the client did not declare the '${capability}' capability: nothing was asked, and the call cannot complete (use a client that supports ${capability.split('.')[0]})`,
    { upstream, asked: askLabel(ask), capability },
  );
}

/**
 * Checks every request an input-required answer embeds against what the
 * client declared; throws the first refusal. Only elicitation and sampling
 * pass: roots describe one client's own workspace, and an upstream process is
 * shared by every client of Gatehouse (docs/decisions.md, "Roots are not passed").
 */
export function checkAsks(upstream: string, asks: Record<string, ClientAsk>, ctx: CallContext): void {
  for (const ask of Object.values(asks)) {
    if (!isObject(ask) || !PASSED_METHODS.includes(ask.method as (typeof PASSED_METHODS)[number])) {
      throw new GatehouseError(
        'upstream_error',
        `upstream '${upstream}' asks the client for '${String((ask as { method?: unknown })?.method).slice(0, 60)}', which Gatehouse does not pass on (only elicitation and sampling)`,
        { upstream },
      );
    }
    const missing = missingCapability(ask, ctx.clientCapabilities);
    if (missing) throw capabilityMissing(upstream, ask, missing);
  }
}

/** The audit's summary of what was asked: labels in order, repeats counted (`elicitation/create:form x2`). */
export function askedSummary(labels: readonly string[]): string | undefined {
  if (!labels.length) return undefined;
  const counts = new Map<string, number>();
  for (const l of labels) counts.set(l, (counts.get(l) ?? 0) + 1);
  return [...counts].map(([l, n]) => (n > 1 ? `${l} x${n}` : l)).join(', ');
}
