/**
 * One retry policy for every caller that talks over a network or waits for a
 * lock: the cloud client (docs/cloud-client.md "Behaviour in short"), the bridge and
 * the CLI. Domain-free and dependency-free (the bridge bundles it).
 *
 * Delay before retry n (n = 1 for the first retry): min(base * 2^(n-1), cap),
 * less up to `jitter` of it at random, so a crowd of clients spreads out and
 * the cap is never exceeded. A Retry-After from the server replaces the delay
 * when it is within `maxRetryAfterMs`; a longer one ends the retries. The
 * loop always ends: after `attempts`, or past `maxElapsedMs`, or on abort.
 */

export interface RetryOptions {
  /** total attempts including the first (>= 1); Infinity only with maxElapsedMs */
  attempts: number;
  baseMs: number;
  capMs: number;
  /** fraction of each delay taken off at random, 0..1 (default 0.5) */
  jitter?: number;
  /** stop retrying once this much time has passed since the first attempt */
  maxElapsedMs?: number;
  /** whether this failure is worth another attempt */
  retryable: (error: unknown, attempt: number) => boolean;
  /** the server's Retry-After for this failure, in ms, if it gave one */
  retryAfterMs?: (error: unknown) => number | undefined;
  /** a Retry-After above this is not waited out: the last error is thrown (default 30 s) */
  maxRetryAfterMs?: number;
  signal?: AbortSignal;
  /** told before each wait, e.g. to log it */
  onRetry?: (info: { attempt: number; delayMs: number; error: unknown }) => void;
  random?: () => number;
  now?: () => number;
  sleep?: (ms: number, signal?: AbortSignal) => Promise<void>;
}

/** min(base * 2^(n-1), cap) less up to `jitter` of it; n is the retry number (1 = first retry). */
export function backoffDelay(
  n: number,
  baseMs: number,
  capMs: number,
  jitter = 0.5,
  random: () => number = Math.random,
): number {
  const full = Math.min(baseMs * 2 ** Math.max(0, n - 1), capMs);
  return full * (1 - Math.min(1, Math.max(0, jitter)) * random());
}

/**
 * Runs `fn` until it succeeds, a failure is not retryable, or the policy says
 * stop; then the last error is thrown. `fn` gets the attempt number (1-based,
 * for an `X-Attempt` header) and the signal.
 */
export async function retry<T>(
  fn: (attempt: number, signal?: AbortSignal) => Promise<T>,
  opts: RetryOptions,
): Promise<T> {
  if (!(opts.attempts >= 1) || (!Number.isFinite(opts.attempts) && opts.maxElapsedMs === undefined)) {
    throw new RangeError('retry: attempts must be >= 1, and finite unless maxElapsedMs bounds the time');
  }
  const now = opts.now ?? Date.now;
  const pause = opts.sleep ?? sleep;
  const started = now();
  for (let attempt = 1; ; attempt++) {
    throwIfAborted(opts.signal);
    try {
      return await fn(attempt, opts.signal);
    } catch (error) {
      if (opts.signal?.aborted || attempt >= opts.attempts || !opts.retryable(error, attempt)) throw error;
      const asked = opts.retryAfterMs?.(error);
      if (asked !== undefined && asked > (opts.maxRetryAfterMs ?? 30_000)) throw error;
      let delayMs = asked ?? backoffDelay(attempt, opts.baseMs, opts.capMs, opts.jitter, opts.random);
      if (opts.maxElapsedMs !== undefined) {
        const left = started + opts.maxElapsedMs - now();
        if (left <= 0) throw error;
        delayMs = Math.min(delayMs, left);
      }
      opts.onRetry?.({ attempt, delayMs, error });
      await pause(delayMs, opts.signal);
    }
  }
}

/** Resolves after `ms`, or at once when `signal` aborts (callers check the signal). */
export function sleep(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    if (signal?.aborted) return resolve();
    const t = setTimeout(done, ms);
    function done() {
      clearTimeout(t);
      signal?.removeEventListener('abort', done);
      resolve();
    }
    signal?.addEventListener('abort', done, { once: true });
  });
}

function throwIfAborted(signal: AbortSignal | undefined): void {
  if (signal?.aborted)
    throw signal.reason instanceof Error ? signal.reason : new DOMException('The operation was aborted', 'AbortError');
}

/** A Retry-After value (delta seconds or an HTTP date) in ms from `now`; undefined when absent or unreadable. */
export function parseRetryAfter(value: string | null | undefined, now: number = Date.now()): number | undefined {
  if (typeof value !== 'string' || value.trim() === '') return undefined;
  const trimmed = value.trim();
  if (/^\d+(\.\d+)?$/.test(trimmed)) return Number(trimmed) * 1000;
  if (!/[a-z]/i.test(trimmed)) return undefined; // '-5' is no delay and no HTTP date
  const at = Date.parse(trimmed);
  return Number.isNaN(at) ? undefined : Math.max(0, at - now);
}
