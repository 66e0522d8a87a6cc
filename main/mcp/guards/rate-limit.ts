import type { ServerResponse } from 'node:http';
import type { RateDecision } from '../../core/rate-limiter.ts';
import { fail, type HttpFailure } from '../http-failure.ts';

/** RateLimit headers (IETF draft) plus Retry-After on refusal. */
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

export function rateFailure(d: RateDecision): HttpFailure {
  return fail('rate_limited', `rate limit of ${d.limit} requests per minute reached; retry after ${d.retry_after} s`, rateHeaders(d));
}

export function applyRateHeaders(res: ServerResponse, d: RateDecision): void {
  for (const [k, v] of Object.entries(rateHeaders(d))) res.setHeader(k, v);
}
