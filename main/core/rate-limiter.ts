/**
 * Per-key rate limit of `limit` requests per minute, as GCRA (a token bucket
 * without a timer): a burst of up to `limit` is allowed, then requests are
 * spaced 60/limit seconds apart. One number per key, pruned lazily.
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

export class RateLimiter {
  private readonly tat = new Map<string, number>();
  private lastPrune = 0;

  check(key: string, limit: number, now: number): RateDecision {
    if (limit <= 0) return { allowed: true, limit: 0, remaining: 0, reset: 0, retry_after: 0 };
    this.prune(now);
    const interval = WINDOW_MS / limit;
    const tat = Math.max(this.tat.get(key) ?? now, now);
    const next = tat + interval;
    const allowAt = next - WINDOW_MS;
    if (now < allowAt) {
      return { allowed: false, limit, remaining: 0, reset: Math.ceil((tat - now) / 1000), retry_after: Math.max(1, Math.ceil((allowAt - now) / 1000)) };
    }
    this.tat.set(key, next);
    return { allowed: true, limit, remaining: Math.max(0, Math.floor((WINDOW_MS - (next - now)) / interval)), reset: Math.ceil((next - now) / 1000), retry_after: 0 };
  }

  private prune(now: number): void {
    if (now - this.lastPrune < WINDOW_MS) return;
    this.lastPrune = now;
    for (const [k, t] of this.tat) if (t <= now) this.tat.delete(k);
  }
}
