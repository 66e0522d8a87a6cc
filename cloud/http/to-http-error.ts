import { CLOUD_ERRORS } from '../../main/contract/cloud/index.ts';
import { HttpError } from '../../main/lib/http/http-error.ts';
import type { CloudError } from '../errors.ts';

/**
 * A service refusal as the edge's HttpError: same code, status and message;
 * details go into the error body, Retry-After into the headers, and
 * `retryable` comes from the contract's table (token_expired is retried once
 * after a clock re-sync, which the status alone would not say).
 */
export function toHttpError(e: CloudError): HttpError {
  const headers: Record<string, string> = { ...e.headers };
  if (e.retryAfter !== undefined) headers['Retry-After'] = String(e.retryAfter);
  return new HttpError(e.code, e.message, {
    status: e.status,
    headers,
    details: { ...e.details, retryable: CLOUD_ERRORS[e.code].retryable },
  });
}

/** An edge refusal (body too large, bad JSON, rate limit) with the contract's retry rule. */
export function withRetryRule(e: HttpError): HttpError {
  const rule = (CLOUD_ERRORS as Record<string, { retryable: boolean } | undefined>)[e.code];
  if (!rule || typeof e.details?.retryable === 'boolean') return e;
  return new HttpError(e.code, e.message, {
    status: e.status,
    headers: { ...e.headers },
    details: { ...e.details, retryable: rule.retryable },
  });
}
