/**
 * A circuit breaker per provider: after `threshold` consecutive failures the
 * provider cools down (no calls) for `cooldownMs`; when that is over one
 * probe call is let through (half-open) while everyone else still waits;
 * the probe's success closes the circuit, its failure reopens it with the
 * cooldown doubled, up to `maxCooldownMs`. A probe that never reports back
 * frees its slot after `probeLeaseMs`, so a lost request cannot wedge a
 * provider shut. The transitions are pure functions over a small state; the
 * board keeps one state per provider id (bounded by the registry) and reads
 * time from an injected clock.
 */

export interface BreakerConfig {
  threshold: number;
  cooldownMs: number;
  maxCooldownMs: number;
  probeLeaseMs: number;
}

export const BREAKER_DEFAULTS: BreakerConfig = {
  threshold: 5,
  cooldownMs: 30_000,
  maxCooldownMs: 600_000,
  probeLeaseMs: 60_000,
};

export interface BreakerState {
  /** consecutive failures since the last success */
  failures: number;
  /** null while closed; else when the cooldown ends (ms) */
  open_until: number | null;
  /** the cooldown that produced open_until (doubles after a failed probe) */
  cooldown_ms: number;
  /** a half-open probe is out until then (ms) */
  probe_until: number | null;
}

export type BreakerPhase = 'closed' | 'open' | 'half_open';

/** What routing needs to know about a provider's breaker. */
export interface BreakerView {
  phase: BreakerPhase;
  failures: number;
  /** when calls may resume (ms); set while open */
  retry_at: number | null;
}

export const CLOSED: BreakerState = Object.freeze({ failures: 0, open_until: null, cooldown_ms: 0, probe_until: null });

export function viewOf(s: BreakerState, now: number): BreakerView {
  if (s.open_until === null) return { phase: 'closed', failures: s.failures, retry_at: null };
  if (now < s.open_until) return { phase: 'open', failures: s.failures, retry_at: s.open_until };
  // Cooldown over: half-open, unless the one probe is already out.
  if (s.probe_until !== null && now < s.probe_until)
    return { phase: 'open', failures: s.failures, retry_at: s.probe_until };
  return { phase: 'half_open', failures: s.failures, retry_at: null };
}

/** May a call go to this provider now? Taking the half-open probe slot is part of the answer. */
export function acquire(s: BreakerState, now: number, cfg: BreakerConfig): { allowed: boolean; state: BreakerState } {
  const phase = viewOf(s, now).phase;
  if (phase === 'closed') return { allowed: true, state: s };
  if (phase === 'open') return { allowed: false, state: s };
  return { allowed: true, state: { ...s, probe_until: now + cfg.probeLeaseMs } };
}

/** The call that took the probe slot was not made after all: give the slot back without counting anything. */
export function releaseProbe(s: BreakerState): BreakerState {
  return s.probe_until === null ? s : { ...s, probe_until: null };
}

export function onSuccess(_s: BreakerState): BreakerState {
  return CLOSED;
}

export function onFailure(s: BreakerState, now: number, cfg: BreakerConfig): BreakerState {
  const failures = s.failures + 1;
  if (s.open_until !== null) {
    // A failed probe (or a call that was in flight when the circuit opened): cool down longer.
    const cooldown = Math.min(cfg.maxCooldownMs, Math.max(cfg.cooldownMs, s.cooldown_ms * 2));
    return { failures, open_until: now + cooldown, cooldown_ms: cooldown, probe_until: null };
  }
  if (failures >= cfg.threshold)
    return { failures, open_until: now + cfg.cooldownMs, cooldown_ms: cfg.cooldownMs, probe_until: null };
  return { ...s, failures };
}

/** The breakers of every provider of one service instance. */
/** Opens the circuit at once (a provider that broke its contract, e.g. answered more tokens than it was allowed). */
export function onTrip(s: BreakerState, now: number, cfg: BreakerConfig): BreakerState {
  const cooldown =
    s.open_until !== null ? Math.min(cfg.maxCooldownMs, Math.max(cfg.cooldownMs, s.cooldown_ms * 2)) : cfg.cooldownMs;
  return {
    failures: Math.max(s.failures + 1, cfg.threshold),
    open_until: now + cooldown,
    cooldown_ms: cooldown,
    probe_until: null,
  };
}

export class BreakerBoard {
  private readonly states = new Map<string, BreakerState>();
  private readonly cfg: BreakerConfig;

  constructor(
    private readonly clock: () => number = Date.now,
    cfg: Partial<BreakerConfig> = {},
  ) {
    this.cfg = { ...BREAKER_DEFAULTS, ...cfg };
  }

  view(id: string): BreakerView {
    return viewOf(this.state(id), this.clock());
  }

  tryAcquire(id: string): boolean {
    const r = acquire(this.state(id), this.clock(), this.cfg);
    this.set(id, r.state);
    return r.allowed;
  }

  release(id: string): void {
    this.set(id, releaseProbe(this.state(id)));
  }

  success(id: string): void {
    this.set(id, onSuccess(this.state(id)));
  }

  failure(id: string): void {
    this.set(id, onFailure(this.state(id), this.clock(), this.cfg));
  }

  trip(id: string): void {
    this.set(id, onTrip(this.state(id), this.clock(), this.cfg));
  }

  /** Forget providers that left the registry. */
  retain(ids: Iterable<string>): void {
    const keep = new Set(ids);
    for (const id of this.states.keys()) if (!keep.has(id)) this.states.delete(id);
  }

  private state(id: string): BreakerState {
    return this.states.get(id) ?? CLOSED;
  }

  private set(id: string, s: BreakerState): void {
    if (s === CLOSED) this.states.delete(id);
    else this.states.set(id, s);
  }
}
