/**
 * Per-key rate limit of `limit` requests per minute, as GCRA (a token bucket
 * without a timer): a burst of up to `limit` is allowed, then requests are
 * spaced 60/limit seconds apart. One number per key, pruned lazily, and at
 * most `maxKeys` keys: keys can come from clients (a forwarded address), so
 * when full the expired ones go first, then the least recently used.
 */
export interface RateDecision {
  allowed: boolean;
  limit: number;
  remaining: number;
  /** seconds until the bucket is full again */
  reset: number;
  /** seconds to wait before retrying (only when refused) */
  retry_after: number;
}

const WINDOW_MS = 60_000;

export const DEFAULT_MAX_KEYS = 10_000;

export class RateLimiter {
  private readonly tat = new Map<string, number>();
  private lastPrune = 0;

  constructor(readonly maxKeys: number = DEFAULT_MAX_KEYS) {}

  get size(): number {
    return this.tat.size;
  }

  check(key: string, limit: number, now: number): RateDecision {
    if (limit <= 0) return { allowed: true, limit: 0, remaining: 0, reset: 0, retry_after: 0 };
    this.prune(now);
    const interval = WINDOW_MS / limit;
    const tat = Math.max(this.tat.get(key) ?? now, now);
    const next = tat + interval;
    const allowAt = next - WINDOW_MS;
    if (now < allowAt) {
      return {
        allowed: false,
        limit,
        remaining: 0,
        reset: Math.ceil((tat - now) / 1000),
        retry_after: Math.max(1, Math.ceil((allowAt - now) / 1000)),
      };
    }
    this.remember(key, next);
    return {
      allowed: true,
      limit,
      remaining: Math.max(0, Math.floor((WINDOW_MS - (next - now)) / interval)),
      reset: Math.ceil((next - now) / 1000),
      retry_after: 0,
    };
  }

  /**
   * Map order is last use: a key moves to the end each time it is set. When
   * full, the least recently used key is forgotten (O(1), so a flood of new
   * keys costs no scans); its next request starts a fresh burst, the price of
   * bounded memory.
   */
  private remember(key: string, tat: number): void {
    if (!this.tat.delete(key) && this.tat.size >= this.maxKeys) this.tat.delete(this.tat.keys().next().value!);
    this.tat.set(key, tat);
  }

  private prune(now: number): void {
    if (now - this.lastPrune < WINDOW_MS) return;
    this.lastPrune = now;
    for (const [k, t] of this.tat) if (t <= now) this.tat.delete(k);
  }
}
