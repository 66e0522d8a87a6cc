import type { IncomingMessage } from 'node:http';
import {
  classifyInboundRequest,
  parseJSONRPCMessage,
  PROTOCOL_VERSION_META_KEY,
  type InboundClassificationOutcome,
} from '@modelcontextprotocol/server';
import { codeOfRpcError, JSONRPC_CODES } from '../contract/errors.ts';
import { eraOfSdk, type ProtocolEra } from '../contract/protocol-era.ts';
import { HttpError } from '../lib/http/http-error.ts';
import { PROTOCOL_VERSION_2026, SERVED_PROTOCOL_VERSIONS, servesVersion } from './protocol-versions.ts';

/** A JSON-RPC request id longer than this is refused: it is echoed in every answer and log line. */
export const MAX_RPC_ID_LENGTH = 256;
const MAX_URI = 2048;

export type RpcMessage = { jsonrpc: '2.0'; id?: string | number; method?: string; params?: Record<string, unknown> };

/** What the endpoint knows once a body passed the checks: which era serves it, and the one message. */
export type CheckedRpc = { era: ProtocolEra; message: RpcMessage; isRequest: boolean };

const headerOf = (req: IncomingMessage, name: string): string | undefined => {
  const v = req.headers[name];
  return typeof v === 'string' ? v : undefined;
};

const metaOf = (body: unknown): Record<string, unknown> | null => {
  const meta = (body as { params?: { _meta?: unknown } } | null)?.params?._meta;
  return meta !== null && typeof meta === 'object' ? (meta as Record<string, unknown>) : null;
};

/** The -32022 refusal, naming every revision we serve (the list server/discover gives). */
export function unsupportedVersion(requested: string): HttpError {
  const shown = requested.slice(0, 40);
  return new HttpError(
    'unsupported_protocol_version',
    `unsupported protocol version '${shown}': this server serves ${SERVED_PROTOCOL_VERSIONS.join(', ')}`,
    {
      details: { supported: [...SERVED_PROTOCOL_VERSIONS], requested: shown },
    },
  );
}

/**
 * A revision we do not serve, named by the MCP-Protocol-Version header or the
 * body's `_meta`, is refused with -32022 and the list of those we do, whether
 * or not the body carries the 2026-07-28 envelope (an `initialize` names its
 * revision in its params and is negotiated there).
 */
function checkVersion(req: IncomingMessage, body: unknown): void {
  if ((body as { method?: unknown } | null)?.method === 'initialize') return;
  const header = headerOf(req, 'mcp-protocol-version');
  const claimed = metaOf(body)?.[PROTOCOL_VERSION_META_KEY];
  // A header and a body that disagree are a mismatch (-32020) before either is judged: the SDK's ladder answers it.
  if (header !== undefined && claimed !== undefined && header !== claimed) return;
  if (header !== undefined && !servesVersion(header)) throw unsupportedVersion(header);
  if (typeof claimed === 'string' && !servesVersion(claimed)) throw unsupportedVersion(claimed);
}

/**
 * The era of a body, when it is plain to see; null when only the SDK's full
 * ladder can tell (or refuse). A body claiming 2026-07-28 in its `_meta` is
 * the SDK handler's to validate (it answers its own ladder, and the endpoint
 * adds `data.code` to those answers). A well-formed JSON-RPC message with no
 * claim and no 2026 header is 2025-era: the same JSON-RPC schema check the
 * SDK's 2025 transport makes, at an eighth of the full ladder's cost.
 */
function plainEra(req: IncomingMessage, body: unknown): ProtocolEra | null {
  const version = headerOf(req, 'mcp-protocol-version');
  const claimed = metaOf(body)?.[PROTOCOL_VERSION_META_KEY];
  if (claimed !== undefined) return version === undefined || version === claimed ? '2026' : null;
  if (version !== undefined && version >= PROTOCOL_VERSION_2026) return null;
  if (headerOf(req, 'mcp-method') !== undefined || headerOf(req, 'mcp-name') !== undefined) return null;
  try {
    parseJSONRPCMessage(body);
    return '2025';
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
    throw new HttpError(
      'invalid_request',
      'JSON-RPC batches are not supported: send one request per HTTP POST (MCP removed batching in 2025-06-18)',
    );
  }
  checkVersion(req, body);
  const plain = plainEra(req, body);
  const outcome: InboundClassificationOutcome | { kind: 'era'; era: ProtocolEra } = plain
    ? { kind: 'era', era: plain }
    : classifyInboundRequest({
        httpMethod: 'POST',
        body,
        ...optional('protocolVersionHeader', headerOf(req, 'mcp-protocol-version')),
        ...optional('mcpMethodHeader', headerOf(req, 'mcp-method')),
        ...optional('mcpNameHeader', headerOf(req, 'mcp-name')),
      });
  if (outcome.kind === 'reject') {
    const data =
      typeof outcome.data === 'object' && outcome.data !== null ? (outcome.data as Record<string, unknown>) : {};
    if (outcome.code === JSONRPC_CODES.unsupported_protocol_version)
      throw unsupportedVersion(typeof data.requested === 'string' ? data.requested : '');
    throw new HttpError(codeOfRpcError(outcome.code), outcome.message, {
      status: outcome.httpStatus,
      details: { ...data, jsonrpc_code: outcome.code },
    });
  }
  const era = outcome.kind === 'era' ? outcome.era : eraOfSdk(outcome.kind);
  const message = body as RpcMessage;
  const isRequest = typeof message.method === 'string' && message.id !== undefined;
  if (typeof message.id === 'string' && message.id.length > MAX_RPC_ID_LENGTH) {
    throw new HttpError('invalid_request', `the JSON-RPC id is longer than ${MAX_RPC_ID_LENGTH} characters`);
  }
  if (isRequest) checkParams(message, era);
  return { era, message, isRequest };
}

/**
 * What the SDK's 2025-era transport checks of a POST, for the messages the
 * endpoint serves itself: the client accepts both answer forms (JSON and
 * SSE, 406 otherwise) and an Mcp-Method header (a 2026-07-28 header; 2025 clients do not send
 * it) agrees with the body, as it must in 2026-07-28.
 */
export function check2025Headers(req: IncomingMessage, rpc: CheckedRpc): void {
  const accept = headerOf(req, 'accept') ?? '';
  if (!accept.includes('application/json') || !accept.includes('text/event-stream')) {
    throw new HttpError(
      'invalid_request',
      'Not Acceptable: the client must accept both application/json and text/event-stream',
      { status: 406 },
    );
  }
  const method = headerOf(req, 'mcp-method');
  if (method !== undefined && method !== rpc.message.method)
    throw new HttpError('invalid_request', 'the Mcp-Method header and the body name different methods');
}

const LISTS = new Set(['tools/list', 'resources/list', 'resources/templates/list', 'prompts/list']);
const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

/**
 * The parameters of the requests we serve, checked with a readable message
 * (-32602): the SDK's own check of a malformed request answers -32603 with a
 * dump of its schema issues. An `initialize` of the 2026-07-28 era names a
 * method that era removed: 404 -32601, as the SDK answers the other removed ones. Every list answers in one page and no cursor is
 * ever issued, so any cursor is one we cannot read (the spec's "invalid
 * cursor": -32602).
 */
function checkParams(m: RpcMessage, era: CheckedRpc['era']): void {
  const bad = (why: string) => new HttpError('invalid_params', `invalid params for ${m.method}: ${why}`);
  if (m.params !== undefined && !isObject(m.params)) throw bad('params must be an object');
  const p = m.params ?? {};
  if (m.method === 'tools/call') {
    // Any length reaches the registry (a Map lookup); what is kept of a made-up name is bounded there.
    if (typeof p.name !== 'string' || p.name.length === 0) throw bad('name must be a non-empty string');
    if (p.arguments !== undefined && !isObject(p.arguments)) throw bad('arguments must be an object');
  } else if (m.method === 'resources/read') {
    if (typeof p.uri !== 'string' || p.uri.length === 0 || p.uri.length > MAX_URI)
      throw bad(`uri must be a string of 1-${MAX_URI} characters`);
  } else if (LISTS.has(m.method!)) {
    if (p.cursor === undefined) return;
    if (typeof p.cursor !== 'string') throw bad('cursor must be a string');
    throw bad(
      'unknown cursor: this server answers every list in one page and never issues a cursor; send the request without one',
    );
  } else if (m.method === 'initialize' && era === '2026') {
    // 2026-07-28 has no handshake: the method does not exist there (HTTP 404, as for any other unknown method).
    throw new HttpError(
      'method_not_found',
      'initialize does not exist in MCP 2026-07-28 (no handshake): send the request itself, with its _meta envelope',
      { status: 404 },
    );
  } else if (m.method === 'initialize') {
    if (m.params === undefined)
      throw bad('params are required: {protocolVersion, capabilities, clientInfo: {name, version}}');
    if (typeof p.protocolVersion !== 'string') throw bad('protocolVersion must be a string, e.g. "2025-11-25"');
    if (!isObject(p.capabilities)) throw bad('capabilities must be an object ({} when the client offers none)');
    if (!isObject(p.clientInfo) || typeof p.clientInfo.name !== 'string' || typeof p.clientInfo.version !== 'string')
      throw bad('clientInfo must be an object with a string name and version');
  }
}

const optional = <K extends string>(key: K, value: string | undefined) =>
  value === undefined ? {} : ({ [key]: value } as Record<K, string>);
