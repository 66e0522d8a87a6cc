import type { IncomingMessage } from 'node:http';
import { classifyInboundRequest, parseJSONRPCMessage, PROTOCOL_VERSION_META_KEY, SUPPORTED_PROTOCOL_VERSIONS, type InboundClassificationOutcome } from '@modelcontextprotocol/server';
import type { ErrorCode } from '../contract/errors.ts';
import { HttpError } from '../lib/http/http-error.ts';

/** A JSON-RPC request id longer than this is refused: it is echoed in every answer and log line. */
export const MAX_RPC_ID_LENGTH = 256;
const MAX_URI = 2048;

export type RpcMessage = { jsonrpc: '2.0'; id?: string | number; method?: string; params?: Record<string, unknown> };

/** What the endpoint knows once a body passed the checks: which era serves it, and the one message. */
export type CheckedRpc = { era: 'legacy' | 'modern'; message: RpcMessage; isRequest: boolean };

const header = (req: IncomingMessage, name: string): string | undefined => {
  const v = req.headers[name];
  return typeof v === 'string' ? v : undefined;
};

const RPC_CODES: Record<number, ErrorCode> = { [-32700]: 'parse_error', [-32600]: 'invalid_request', [-32601]: 'method_not_found', [-32602]: 'invalid_params', [-32603]: 'internal_error' };

/** Our string code for a JSON-RPC error the SDK produced. */
export const codeOfRpcError = (code: number): ErrorCode => RPC_CODES[code] ?? 'invalid_request';

/**
 * The era of a body, when it is plain to see; null when only the SDK's full
 * ladder can tell (or refuse). A body claiming 2026-07-28 in its `_meta` is
 * the SDK handler's to validate (it answers its own ladder, and the endpoint
 * adds `data.code` to those answers). A well-formed JSON-RPC message with no
 * claim and no 2026 header is 2025-era: the same JSON-RPC schema check the
 * SDK's 2025 transport makes, at an eighth of the full ladder's cost.
 */
function plainEra(req: IncomingMessage, body: unknown): 'legacy' | 'modern' | null {
  const meta = (body as { params?: { _meta?: Record<string, unknown> } } | null)?.params?._meta;
  if (meta !== null && typeof meta === 'object' && meta[PROTOCOL_VERSION_META_KEY] !== undefined) return 'modern';
  const version = header(req, 'mcp-protocol-version');
  if (version !== undefined && !SUPPORTED_PROTOCOL_VERSIONS.includes(version)) return null;
  if (header(req, 'mcp-method') !== undefined || header(req, 'mcp-name') !== undefined) return null;
  try {
    parseJSONRPCMessage(body);
    return 'legacy';
  } catch {
    return null;
  }
}

/**
 * Checks one parsed body before any server instance sees it, and says which
 * protocol era serves it. Anything not plainly of one era goes through the
 * MCP SDK's own validation ladder (classifyInboundRequest: JSON-RPC shape,
 * era, envelope, header/body agreement), so Gatehouse refuses exactly what
 * the SDK would; its refusals are re-issued as our HttpError, so every
 * malformed request gets a 4xx whose JSON-RPC error carries `data.code` and
 * the request id.
 * On top of it: no batches (no MCP revision we serve has them), ids of
 * bounded length, and the parameters of the methods that reach our pipeline
 * (a tools/call name, a resources/read URI) of the right type and size.
 */
export function checkRpc(req: IncomingMessage, body: unknown): CheckedRpc {
  if (Array.isArray(body)) {
    throw new HttpError('invalid_request', 'JSON-RPC batches are not supported: send one request per HTTP POST (MCP removed batching in 2025-06-18)');
  }
  const plain = plainEra(req, body);
  const outcome: InboundClassificationOutcome | { kind: 'legacy' | 'modern' } = plain ? { kind: plain } : classifyInboundRequest({
    httpMethod: 'POST',
    body,
    ...optional('protocolVersionHeader', header(req, 'mcp-protocol-version')),
    ...optional('mcpMethodHeader', header(req, 'mcp-method')),
    ...optional('mcpNameHeader', header(req, 'mcp-name')),
  });
  if (outcome.kind === 'reject') {
    const data = typeof outcome.data === 'object' && outcome.data !== null ? (outcome.data as Record<string, unknown>) : {};
    throw new HttpError(codeOfRpcError(outcome.code), outcome.message, { status: outcome.httpStatus, details: { ...data, jsonrpc_code: outcome.code } });
  }
  const message = body as RpcMessage;
  const isRequest = typeof message.method === 'string' && message.id !== undefined;
  if (typeof message.id === 'string' && message.id.length > MAX_RPC_ID_LENGTH) {
    throw new HttpError('invalid_request', `the JSON-RPC id is longer than ${MAX_RPC_ID_LENGTH} characters`);
  }
  if (isRequest) checkParams(message);
  return { era: outcome.kind, message, isRequest };
}

/**
 * What the SDK's 2025-era transport checks of a POST, for the messages the
 * endpoint serves itself: the client accepts both answer forms (JSON and
 * SSE, 406 otherwise), a later request names a protocol revision we speak,
 * and an Mcp-Method header (a 2026-07-28 header; 2025 clients do not send
 * it) agrees with the body, as it must in 2026-07-28.
 */
export function checkLegacyHeaders(req: IncomingMessage, rpc: CheckedRpc): void {
  const accept = header(req, 'accept') ?? '';
  if (!accept.includes('application/json') || !accept.includes('text/event-stream')) {
    throw new HttpError('invalid_request', 'Not Acceptable: the client must accept both application/json and text/event-stream', { status: 406 });
  }
  const version = header(req, 'mcp-protocol-version');
  if (version !== undefined && rpc.message.method !== 'initialize' && !SUPPORTED_PROTOCOL_VERSIONS.includes(version)) {
    throw new HttpError('invalid_request', `unsupported protocol version '${version.slice(0, 40)}'`, { details: { supported: SUPPORTED_PROTOCOL_VERSIONS } });
  }
  const method = header(req, 'mcp-method');
  if (method !== undefined && method !== rpc.message.method) throw new HttpError('invalid_request', 'the Mcp-Method header and the body name different methods');
}

function checkParams(m: RpcMessage): void {
  const p = m.params ?? {};
  const bad = (why: string) => new HttpError('invalid_params', `invalid params for ${m.method}: ${why}`);
  if (m.method === 'tools/call') {
    // Any length reaches the registry (a Map lookup); what is kept of a made-up name is bounded there.
    if (typeof p.name !== 'string' || p.name.length === 0) throw bad('name must be a non-empty string');
    if (p.arguments !== undefined && (typeof p.arguments !== 'object' || p.arguments === null || Array.isArray(p.arguments))) throw bad('arguments must be an object');
  } else if (m.method === 'resources/read') {
    if (typeof p.uri !== 'string' || p.uri.length === 0 || p.uri.length > MAX_URI) throw bad(`uri must be a string of 1-${MAX_URI} characters`);
  }
}

const optional = <K extends string>(key: K, value: string | undefined) => (value === undefined ? {} : ({ [key]: value } as Record<K, string>));
