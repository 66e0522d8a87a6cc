import type { ServerResponse } from 'node:http';
import type { RateDecision, RateLimiter } from '../rate-limiter.ts';
import { HttpError } from './http-error.ts';

/** RateLimit headers (IETF draft, a 60 s window) plus Retry-After on refusal. */
export function rateHeaders(d: RateDecision): Record<string, string> {
  if (d.limit <= 0) return {};
  return {
    'RateLimit-Limit': String(d.limit),
    'RateLimit-Remaining': String(d.remaining),
    'RateLimit-Reset': String(d.reset),
    'RateLimit-Policy': `${d.limit};w=60`,
    ...(d.allowed ? {} : { 'Retry-After': String(d.retry_after) }),
  };
}

/** The 429 for a refused decision, with its headers; `raise` says which setting raises the limit. */
export function rateLimitedError(d: RateDecision, raise?: string): HttpError {
  return new HttpError(
    'rate_limited',
    `rate limit of ${d.limit} requests per minute reached; retry after ${d.retry_after} s${raise ? ` (${raise})` : ''}`,
    { headers: rateHeaders(d) },
  );
}

/**
 * The rate-limit guard: spends one request of `key`'s budget (`limit` per
 * minute, 0 = off), puts the RateLimit headers on the answer, and returns the
 * 429 to send when the budget is spent (`raise`: which setting raises the limit, said in it).
 */
export function checkRate(
  res: ServerResponse,
  limiter: RateLimiter,
  key: string,
  limit: number,
  now: number,
  raise?: string,
): HttpError | null {
  const d = limiter.check(key, limit, now);
  if (!d.allowed) return rateLimitedError(d, raise);
  for (const [k, v] of Object.entries(rateHeaders(d))) res.setHeader(k, v);
  return null;
}
