import { JSONRPC_CODES, type ErrorCode } from '../../contract/errors.ts';
import type { HttpError } from './http-error.ts';

/** What an envelope may need besides the error itself. */
export interface ErrorMeta {
  requestId: string;
  /** the JSON-RPC id of the request being refused, when one was read */
  rpcId?: string | number | null;
}

/** Turns a refusal into the body of one API's error shape. */
export type Envelope = (err: HttpError, meta: ErrorMeta) => unknown;

/** The local admin API and IPC: `{ok:false, code, message, details?}`. */
export const adminEnvelope: Envelope = (err) => ({
  ok: false,
  code: err.code,
  message: err.message,
  ...(err.details ? { details: err.details } : {}),
});

/**
 * The MCP endpoint: a JSON-RPC error whose `data` carries the string code and
 * the request id, plus the refusal's details. A refusal that must keep a
 * JSON-RPC code of its own (one the MCP SDK's validation chose, such as
 * -32020 for headers that disagree with the body) names it as the detail
 * `jsonrpc_code`; otherwise the contract's table decides.
 */
export const jsonRpcEnvelope: Envelope = (err, meta) => {
  const { jsonrpc_code: own, ...details } = err.details ?? {};
  const code =
    typeof own === 'number' && Number.isInteger(own)
      ? own
      : ((JSONRPC_CODES as Partial<Record<ErrorCode, number>>)[err.code] ?? -32600);
  // null prototype: a detail named __proto__ stays a plain field
  const data: Record<string, unknown> = Object.assign(Object.create(null) as Record<string, unknown>, details, {
    code: err.code,
    request_id: meta.requestId,
  });
  return { jsonrpc: '2.0', id: meta.rpcId ?? null, error: { code, message: err.message, data } };
};

const CLOUD_RESERVED = new Set(['code', 'message', 'request_id', 'retryable']);

/**
 * The cloud gateway (docs/cloud-gateway.md "Conventions"): `{success:false, error:{code,
 * message, request_id, retryable, ...details}}`. Retryable follows the client
 * policy: 408, 429 rate_limited and 5xx; never quota_exceeded or another 4xx.
 * A detail may set `retryable` itself; it never replaces code or message.
 */
export const cloudEnvelope: Envelope = (err, meta) => {
  // null prototype: a detail named __proto__ stays a plain field
  const error: Record<string, unknown> = Object.assign(Object.create(null) as Record<string, unknown>, {
    code: err.code,
    message: err.message,
    request_id: meta.requestId,
    retryable: typeof err.details?.retryable === 'boolean' ? err.details.retryable : isRetryable(err),
  });
  for (const [k, v] of Object.entries(err.details ?? {})) if (!CLOUD_RESERVED.has(k)) error[k] = v;
  return { success: false, error };
};

function isRetryable(err: HttpError): boolean {
  return err.code === 'rate_limited' || err.status === 408 || err.status >= 500;
}
