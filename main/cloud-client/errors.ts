import { CloudErrorEnvelope, type CloudErrorCode } from '../contract/cloud/errors.ts';
import type { StopReason } from '../contract/cloud-status.ts';
import type { ErrorCode } from '../contract/errors.ts';
import { GatehouseError } from '../core/errors.ts';
import { redact } from '../lib/redact.ts';

/**
 * The cloud client's one error type: a GatehouseError whose code is one of
 * the gateway's codes (the spec's twelve plus the request errors), carrying
 * the request id sent, the attempts made and why the client stopped. The
 * gateway's message is kept (it is written to help, and never holds a
 * secret), cut to a bounded length and passed through the redactor anyway.
 */
export class CloudClientError extends GatehouseError {
  constructor(
    readonly cloudCode: CloudErrorCode,
    message: string,
    readonly info: {
      requestId: string | null;
      httpStatus: number | null;
      /** whether the policy may try again (network, 408, 429 rate_limited, 5xx; token_expired once) */
      retryable: boolean;
      /** Retry-After of the answer, in ms */
      retryAfterMs?: number;
      /** the rest of the gateway's error object: required_plan, quota details, server_time, certificate... */
      details?: Record<string, unknown>;
      attempts?: number;
      stopped?: StopReason;
    },
  ) {
    super(cloudCode satisfies ErrorCode, message, {
      ...(info.details ?? {}),
      ...(info.requestId ? { request_id: info.requestId } : {}),
    });
    this.name = 'CloudClientError';
  }

  get requestId(): string | null {
    return this.info.requestId;
  }
}

export const isCloudClientError = (e: unknown): e is CloudClientError => e instanceof CloudClientError;

const MAX_MESSAGE = 500;
// eslint-disable-next-line no-control-regex -- control characters are what is removed
const clean = (s: string) => redact(s.replace(/[\u0000-\u001f\u007f]/g, ' ')).slice(0, MAX_MESSAGE);

/** The gateway could not be reached, or answered something that is not the contract. The client makes the code up, as docs/cloud-gateway.md "Conventions" says. */
export function unavailable(
  message: string,
  requestId: string | null,
  opts: { retryable: boolean; httpStatus?: number | null; retryAfterMs?: number; reason: string },
): CloudClientError {
  return new CloudClientError('gateway_unavailable', clean(message), {
    requestId,
    httpStatus: opts.httpStatus ?? null,
    retryable: opts.retryable,
    retryAfterMs: opts.retryAfterMs,
    details: { reason: opts.reason },
  });
}

/** Whether the client policy retries an answer with this status and code (docs/cloud-client.md "Behaviour in short"). */
export function policyRetries(status: number, code: CloudErrorCode | null): boolean {
  if (code === 'quota_exceeded') return false;
  if (code === 'token_expired') return true; // once, after the clock resync: the caller counts
  if (status === 408) return true;
  if (status === 429) return code === null || code === 'rate_limited';
  return status >= 500;
}

/** Maps a non-2xx answer to the typed error: the envelope when there is one, else the status. */
export function fromAnswer(
  status: number,
  body: unknown,
  requestId: string,
  retryAfterMs: number | undefined,
): CloudClientError {
  const env = CloudErrorEnvelope.safeParse(body);
  if (env.success) {
    const { code, message, request_id: _rid, retryable: _r, ...details } = env.data.error;
    return new CloudClientError(code, clean(message), {
      requestId,
      httpStatus: status,
      retryable: policyRetries(status, code),
      retryAfterMs,
      details: boundDetails(details),
    });
  }
  if (status === 429)
    return new CloudClientError('rate_limited', `the gateway (or a proxy before it) answered 429 Too Many Requests`, {
      requestId,
      httpStatus: status,
      retryable: true,
      retryAfterMs,
    });
  if (status >= 500 || status === 408)
    return unavailable(`the gateway (or a proxy before it) answered HTTP ${status}`, requestId, {
      retryable: true,
      httpStatus: status,
      retryAfterMs,
      reason: 'http_status',
    });
  if (status === 404)
    return new CloudClientError('not_found', `the gateway has no such endpoint (HTTP 404): check the gateway URL`, {
      requestId,
      httpStatus: status,
      retryable: false,
    });
  return new CloudClientError(
    'invalid_request',
    `the gateway refused the request with HTTP ${status} and no error details`,
    { requestId, httpStatus: status, retryable: false },
  );
}

/** Keeps what a person or phase B needs from the details, bounded: no huge strings, no deep nesting beyond JSON of 16 KB. */
function boundDetails(details: Record<string, unknown>): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(details)) {
    if (k === '__proto__' || k === 'constructor' || k === 'prototype') continue;
    const json = JSON.stringify(v);
    if (json === undefined || json.length > 16_384) continue;
    out[k] = typeof v === 'string' ? clean(v) : v;
  }
  return out;
}
