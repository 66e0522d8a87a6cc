import { countsAgainstProvider, failsOver, type FailureKind, type ProviderOutcome } from '../providers/outcome.ts';
import type { BreakerBoard } from './breaker.ts';
import type { Route } from './plan-routes.ts';

/**
 * Walks the planned routes until one answers. Before every hop (the first
 * included) it calls `beforeHop`, where ai/generate re-checks the budget and
 * reserves the estimate, so a fallback can never escape a limit; after every
 * call it calls `afterHop` with the outcome, where the reservation is settled
 * or released. A provider whose breaker opened since the plan was made is
 * skipped. It stops at the first success, at a failure that every provider
 * would repeat (the request itself was refused), when the caller aborts, or
 * when `beforeHop` throws; `provider_unavailable` only when every route failed.
 *
 * There is no retry of the same provider here: the next route is the retry,
 * and the site's client already retries `provider_unavailable` with backoff
 * (docs/cloud-client.md "Behaviour in short"), so a server-side loop would multiply attempts.
 */

export interface HopRecord {
  provider: string;
  model: string;
  status: 'ok' | 'failed' | 'skipped';
  kind?: FailureKind | 'cooling_down';
  retryable?: boolean;
  /** for the operator's log; may quote the provider, never the key */
  reason?: string;
  tokens_input: number;
  tokens_output: number;
  estimated: boolean;
}

export interface HopLogger {
  warn(message: string, fields?: Record<string, unknown>): void;
}

export interface ExecuteOptions {
  routes: readonly Route[];
  call: (route: Route, signal: AbortSignal | undefined) => Promise<ProviderOutcome>;
  /** before each hop; throw to stop the walk (e.g. quota_exceeded): the error comes back as `stopped` */
  beforeHop?: (route: Route, hop: number) => Promise<void> | void;
  /** after each call, success or failure: settle or release what beforeHop reserved */
  afterHop?: (route: Route, outcome: ProviderOutcome, hop: number) => Promise<void> | void;
  breakers?: BreakerBoard;
  /** stops the walk: no further hop starts once it aborts */
  signal?: AbortSignal;
  /** aborts a hop's call in flight (default `signal`); a call left to finish is settled and recorded even when the walk stopped */
  hopSignal?: AbortSignal;
  log?: HopLogger;
}

export type ExecuteResult =
  | {
      ok: true;
      route: Route;
      text: string;
      model: string;
      tokens_input: number;
      tokens_output: number;
      estimated: boolean;
      hops: HopRecord[];
    }
  | {
      ok: false;
      outcome: 'all_failed';
      code: 'provider_unavailable';
      message: string;
      retry_after_s: number;
      hops: HopRecord[];
    }
  | { ok: false; outcome: 'refused'; code: 'invalid_request'; message: string; hops: HopRecord[] }
  | { ok: false; outcome: 'aborted'; hops: HopRecord[] }
  | { ok: false; outcome: 'stopped'; error: unknown; hops: HopRecord[] };

const NO_USAGE = { tokens_input: 0, tokens_output: 0, estimated: false } as const;

/** What a site is told about a failed hop: the kind, never the provider's own words. */
const KIND_WORDS: Record<FailureKind | 'cooling_down', string> = {
  rate_limited: 'rate limited',
  server_error: 'provider error',
  timeout: 'timed out',
  network: 'unreachable',
  disconnected: 'disconnected mid-answer',
  malformed: 'unreadable answer',
  auth: 'not accepting our credentials',
  not_found: 'model not available there',
  not_configured: 'not configured',
  bad_request: 'refused the request',
  aborted: 'cancelled',
  cooling_down: 'cooling down',
};

export async function executeRoutes(opts: ExecuteOptions): Promise<ExecuteResult> {
  const hops: HopRecord[] = [];
  const retryAfters: number[] = [];
  for (const route of opts.routes) {
    if (opts.signal?.aborted) return { ok: false, outcome: 'aborted', hops };
    const id = route.provider.id;
    const hop = hops.length;
    if (opts.breakers && !opts.breakers.tryAcquire(id)) {
      hops.push({ provider: id, model: route.model, status: 'skipped', kind: 'cooling_down', ...NO_USAGE });
      continue;
    }
    try {
      await opts.beforeHop?.(route, hop);
    } catch (error) {
      opts.breakers?.release(id);
      return { ok: false, outcome: 'stopped', error, hops };
    }

    let out: ProviderOutcome;
    try {
      out = await opts.call(route, opts.hopSignal ?? opts.signal);
    } catch (error) {
      // Adapters answer outcomes; a throw is a bug, and must not keep a probe slot taken.
      opts.breakers?.release(id);
      throw error;
    }
    if (out.ok) opts.breakers?.success(id);
    else if (countsAgainstProvider(out.failure.kind)) opts.breakers?.failure(id);
    else opts.breakers?.release(id);
    await opts.afterHop?.(route, out, hop);

    const usage = { tokens_input: out.tokens_input, tokens_output: out.tokens_output, estimated: out.estimated };
    if (out.ok) {
      hops.push({ provider: id, model: route.model, status: 'ok', ...usage });
      return { ok: true, route, text: out.text, model: out.model, ...usage, hops };
    }

    const f = out.failure;
    hops.push({
      provider: id,
      model: route.model,
      status: 'failed',
      kind: f.kind,
      retryable: f.retryable,
      reason: f.reason,
      ...usage,
    });
    opts.log?.warn('ai provider call failed', {
      provider: id,
      model: route.model,
      hop,
      kind: f.kind,
      retryable: f.retryable,
      status: f.status,
      reason: f.reason,
    });
    if (f.retry_after_s !== undefined) retryAfters.push(f.retry_after_s);
    if (f.kind === 'aborted') return { ok: false, outcome: 'aborted', hops };
    if (!failsOver(f.kind))
      return {
        ok: false,
        outcome: 'refused',
        code: 'invalid_request',
        message: `the provider refused the request: ${KIND_WORDS[f.kind]}`,
        hops,
      };
  }
  const tried = hops.map((h) => `${h.provider} (${KIND_WORDS[h.kind ?? 'server_error']})`);
  // The soonest the providers said they would take calls again, else a short pause.
  const retryAfter = retryAfters.length ? Math.min(...retryAfters) : 5;
  return {
    ok: false,
    outcome: 'all_failed',
    code: 'provider_unavailable',
    message: tried.length ? `every allowed AI provider failed: ${tried.join(', ')}` : 'no AI provider route to try',
    retry_after_s: Math.min(60, Math.max(1, retryAfter)),
    hops,
  };
}
