import { z } from 'zod';

/**
 * Every error that crosses a boundary (JSON-RPC, admin API, IPC, CLI --json,
 * cloud envelope) carries one of these string codes. Nothing matches on
 * message text.
 */
export const ErrorCode = z.enum([
  // MCP endpoint (DESIGN.md section 3 status table)
  'unauthorized',
  'forbidden',
  'gateway_disabled',
  'rate_limited',
  'payload_too_large',
  'parse_error',
  'invalid_request',
  'method_not_found',
  'unknown_tool',
  'invalid_params',
  'entitlement_required',
  // a tool call that ran out of time, or that its client cancelled
  'timeout',
  'cancelled',
  // staged writes
  'staged_expired',
  'stale_preview',
  'staged_not_found',
  'staged_already_decided',
  'staged_too_large',
  'staged_limit_reached',
  /** the service stopped while a write was being applied and its plugin cannot tell whether it took effect */
  'apply_interrupted',
  // domain / admin
  'not_found',
  'conflict',
  'invalid_value',
  'provider_unavailable',
  'store_locked',
  'store_corrupt',
  'vault_unavailable',
  'service_unavailable',
  'upstream_error',
  'internal_error',
  // cloud gateway (seed part B)
  'gateway_unavailable',
  'invalid_site',
  'license_invalid',
  'license_expired',
  'quota_exceeded',
  'signature_invalid',
  'token_expired',
  'product_inactive',
  'update_not_allowed',
  'site_limit_reached',
  /** what a call must write (its usage event, its audit line) cannot be persisted now (a full or failing disk): it did not run */
  'storage_unavailable',
]);
export type ErrorCode = z.infer<typeof ErrorCode>;

/** JSON-RPC error codes per DESIGN.md's status table. */
export const JSONRPC_CODES = {
  unauthorized: -32001,
  gateway_disabled: -32002,
  forbidden: -32003,
  rate_limited: -32029,
  payload_too_large: -32600,
  invalid_request: -32600,
  method_not_found: -32601,
  parse_error: -32700,
  unknown_tool: -32602,
  invalid_params: -32602,
  staged_too_large: -32602,
  staged_limit_reached: -32029,
  internal_error: -32603,
} as const satisfies Partial<Record<ErrorCode, number>>;

/** HTTP statuses for the codes the endpoint and the admin API answer with. */
export const HTTP_STATUS: Partial<Record<ErrorCode, number>> = {
  unauthorized: 401,
  forbidden: 403,
  gateway_disabled: 503,
  rate_limited: 429,
  payload_too_large: 413,
  parse_error: 400,
  invalid_request: 400,
  method_not_found: 404,
  invalid_value: 400,
  invalid_params: 400,
  not_found: 404,
  staged_not_found: 404,
  conflict: 409,
  site_limit_reached: 409,
  staged_already_decided: 409,
  staged_expired: 410,
  stale_preview: 409,
  staged_too_large: 413,
  staged_limit_reached: 429,
  apply_interrupted: 409,
  store_locked: 423,
  service_unavailable: 503,
  gateway_unavailable: 503,
  internal_error: 500,
  storage_unavailable: 503,
};

/** The `{ok, data} | {ok:false, code, message}` shape of IPC and the admin API. */
export type Result<T> = { ok: true; data: T } | { ok: false; code: ErrorCode; message: string; details?: Record<string, unknown> };

export const ErrorBody = z.object({
  ok: z.literal(false),
  code: ErrorCode,
  message: z.string(),
  details: z.record(z.string(), z.unknown()).optional(),
});
