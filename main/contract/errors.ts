import { z } from 'zod';
import { lazySchema } from './lazy-schema.ts';

/**
 * Every error that crosses a boundary (JSON-RPC, admin API, IPC, CLI --json,
 * cloud envelope) carries one of these string codes. Nothing matches on
 * message text.
 */
export const ErrorCode = lazySchema(() =>
  z.enum([
    // MCP endpoint (docs/mcp.md "Refusals")
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
    /** the upstream MCP server is down or disabled: answered at once, nothing was sent to it */
    'upstream_unavailable',
    /** an upstream write was in flight when the service stopped: whether it took effect is unknown; a person checks (never retried) */
    'outcome_unknown',
    /** an upstream asked the client for input (elicitation, sampling) that the client did not declare it can give */
    'client_capability_missing',
    'internal_error',
    // cloud gateway (docs/cloud-gateway.md)
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
    // MCP 2026-07-28: the request names a protocol revision the server does not serve
    'unsupported_protocol_version',
    /** what a call must write (its usage event, its audit line) cannot be persisted now (a full or failing disk): it did not run */
    'storage_unavailable',
    /** a person discarded the staged write (an MCP task that waited for approval fails with it) */
    'staged_discarded',
    /** an approval link whose write was decided, expired or pruned: the link died with it */
    'approval_link_gone',
    /** an upstream that signs in with OAuth has no usable token: a person signs in (gatehouse upstreams login ID, or the console) */
    'sign_in_required',
    /** the tool-call policy refused the call (docs/policy.md): the policy ids are in the message and details */
    'policy_denied',
    /** the active policy cannot be evaluated (it no longer validates, or the engine failed to load): calls are refused, not let through */
    'policy_unavailable',
    /** a confirm of a staged write whose arguments, preview or (upstream) tool definition changed since the person saw it */
    'stale_approval',
    /** the token that staged a write was revoked: the write is discarded and cannot be approved */
    'token_revoked',
    /** the token that staged a write was narrowed (profile, scope, its user's role) and may not make it now: it cannot be approved */
    'token_narrowed',
    /** the upstream a pending write was staged for was removed: the write is discarded (one re-added under the id is another program) */
    'upstream_removed',
  ]),
);
export type ErrorCode = z.infer<typeof ErrorCode>;

/**
 * JSON-RPC error codes per the status table of docs/mcp.md. Our own codes sit in
 * JSON-RPC's implementation-defined server range (-32000..-32099) and avoid
 * every code the MCP specification assigns there: -32002 (2025-11-25's
 * resource not found), -32020 (header mismatch), -32021 (missing client
 * capability), -32022 (unsupported protocol version), -32042 (URL
 * elicitation required).
 */
export const JSONRPC_CODES = {
  unauthorized: -32001,
  gateway_disabled: -32010,
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
  unsupported_protocol_version: -32022,
} as const satisfies Partial<Record<ErrorCode, number>>;

/** The code MCP 2025-11-25 gives a resources/read of an unknown URI; 2026-07-28 (SEP-2164) answers -32602 instead. */
export const RESOURCE_NOT_FOUND_2025 = -32002;

/** MCP 2026-07-28's MissingRequiredClientCapability: the request needs a capability the client did not declare (HTTP 400). */
export const MISSING_CLIENT_CAPABILITY = -32021;

/**
 * Our string code for a JSON-RPC error whose numeric code another party
 * chose (the MCP SDK's validation, a handler): the one table every JSON-RPC
 * seam reads (the MCP endpoint's exchanges, the bridge).
 */
export const RPC_CODES: Readonly<Record<number, ErrorCode>> = {
  [-32700]: 'parse_error',
  [-32600]: 'invalid_request',
  [-32601]: 'method_not_found',
  [-32602]: 'invalid_params',
  [-32603]: 'internal_error',
  [-32020]: 'invalid_request',
  [MISSING_CLIENT_CAPABILITY]: 'client_capability_missing',
  [-32022]: 'unsupported_protocol_version',
  [RESOURCE_NOT_FOUND_2025]: 'not_found',
};

export const codeOfRpcError = (code: number): ErrorCode => RPC_CODES[code] ?? 'invalid_request';

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
  unsupported_protocol_version: 400,
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
  upstream_unavailable: 503,
  gateway_unavailable: 503,
  internal_error: 500,
  storage_unavailable: 503,
  approval_link_gone: 410,
  sign_in_required: 409,
  policy_denied: 403,
  policy_unavailable: 503,
  // a confirm refused because the write, its preview or its token changed since the person saw it: a conflict with the state, like stale_preview
  stale_approval: 409,
  token_narrowed: 409,
  token_revoked: 409,
  upstream_removed: 409,
};

/** The `{ok, data} | {ok:false, code, message}` shape of IPC and the admin API. */
export type Result<T> =
  { ok: true; data: T } | { ok: false; code: ErrorCode; message: string; details?: Record<string, unknown> };

export const ErrorBody = lazySchema(() =>
  z.object({
    ok: z.literal(false),
    code: ErrorCode,
    message: z.string(),
    details: z.record(z.string(), z.unknown()).optional(),
  }),
);
