import { z } from 'zod';
import type { BreakerView } from '../contract/cloud-status.ts';
import { lazySchema } from '../contract/lazy-schema.ts';

/**
 * The client's circuit breaker (docs/cloud-client.md "Behaviour in short"): when a logical
 * request has run out of retries on something transient, the gateway is
 * left alone for 60 s, doubling on each trip in a row up to 10 min (or
 * longer when the gateway itself asked, by Retry-After). When the time is
 * up one request goes through (half-open); its success closes the breaker,
 * its failure opens it again for twice as long. Pure: state in, state out;
 * the state is persisted with the client's other state.
 */
export const BREAKER_BASE_MS = 60_000;
export const BREAKER_MAX_MS = 10 * 60_000;

export const BreakerState = lazySchema(() =>
  z.object({
    /** trips in a row without a success in between */
    trips: z.number().int().nonnegative(),
    open_until: z.number().nullable(),
    open_ms: z.number().int().nonnegative(),
  }),
);
export type BreakerState = z.infer<typeof BreakerState>;

export const CLOSED: BreakerState = { trips: 0, open_until: null, open_ms: 0 };

export type BreakerGate = { pass: true; probe: boolean } | { pass: false; retryAt: number };

/** May a request go now? `probe` when it is the half-open trial. */
export function breakerGate(s: BreakerState, now: number): BreakerGate {
  if (s.open_until === null) return { pass: true, probe: false };
  if (now < s.open_until) return { pass: false, retryAt: s.open_until };
  return { pass: true, probe: true };
}

/** Retries ran out (or a probe failed): open, for longer each time; at least as long as the gateway asked. */
export function breakerTrip(s: BreakerState, now: number, askedMs = 0): BreakerState {
  const openMs = s.trips === 0 ? BREAKER_BASE_MS : Math.min(Math.max(s.open_ms, BREAKER_BASE_MS) * 2, BREAKER_MAX_MS);
  return { trips: s.trips + 1, open_ms: openMs, open_until: now + Math.max(openMs, Math.min(askedMs, BREAKER_MAX_MS)) };
}

/**
 * A person asked (a manual sync): the wait is over now, so the next request is the half-open probe
 * whatever the saved state says (after a restart it would refuse for up to 10 min although the gateway
 * may be back). A failed probe opens it again, for longer, as any failed probe does.
 */
export function breakerProbeNow(s: BreakerState, now: number): BreakerState {
  return s.open_until !== null && now < s.open_until ? { ...s, open_until: now } : s;
}

export function breakerView(s: BreakerState, now: number): BreakerView {
  const state = s.open_until === null ? 'closed' : now < s.open_until ? 'open' : 'half_open';
  return {
    state,
    open_until: s.open_until === null ? null : new Date(s.open_until).toISOString(),
    open_ms: s.open_ms,
    trips: s.trips,
  };
}
