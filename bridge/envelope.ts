import { objectRanges, smallValue } from './json-peek.ts';

/**
 * The little the bridge reads of a JSON-RPC message: its id and method. It
 * never validates a message against the MCP schemas; the server does that.
 * Small messages are JSON.parse'd; large ones are only scanned for the few
 * fields needed, so a big argument or result is never decoded.
 */

export type JsonRpcId = string | number;

export interface ClientMessage {
  kind: 'request' | 'notification' | 'response';
  id: JsonRpcId | undefined;
  method: string | undefined;
  params: Record<string, unknown> | undefined;
}

// Above this, scanning for a few fields beats decoding the whole message (time, and memory the bridge would hold).
const PARSE_LIMIT = 64 * 1024;

// The params fields the bridge may need: Mcp-Name sources, the cancelled request, the 2026 `_meta` envelope.
const PARAM_FIELDS = ['name', 'uri', 'taskId', 'requestId', '_meta'];

export function readClientMessage(line: Buffer): ClientMessage | undefined {
  if (line.length > PARSE_LIMIT) return scanClientMessage(line);
  let msg: unknown;
  try {
    msg = JSON.parse(line.toString('utf8'));
  } catch {
    return undefined;
  }
  if (msg === null || typeof msg !== 'object' || Array.isArray(msg)) return undefined;
  const m = msg as Record<string, unknown>;
  const id = typeof m.id === 'string' || typeof m.id === 'number' ? m.id : undefined;
  const method = typeof m.method === 'string' ? m.method : undefined;
  const params = m.params !== null && typeof m.params === 'object' ? (m.params as Record<string, unknown>) : undefined;
  if (method !== undefined) return { kind: id === undefined ? 'notification' : 'request', id, method, params };
  if (id !== undefined && ('result' in m || 'error' in m)) return { kind: 'response', id, method, params };
  return undefined;
}

function scanClientMessage(line: Buffer): ClientMessage | undefined {
  const top = objectRanges(line);
  if (!top) return undefined;
  const idValue = smallValue(line, top, 'id');
  const id = typeof idValue === 'string' || typeof idValue === 'number' ? idValue : undefined;
  const methodValue = smallValue(line, top, 'method');
  const method = typeof methodValue === 'string' ? methodValue : undefined;
  let params: Record<string, unknown> | undefined;
  const p = top.get('params');
  const pr = p ? objectRanges(line, p[0]) : undefined;
  if (pr) {
    params = {};
    for (const f of PARAM_FIELDS) {
      const v = smallValue(line, pr, f);
      if (v !== undefined) params[f] = v;
    }
  }
  if (method !== undefined) return { kind: id === undefined ? 'notification' : 'request', id, method, params };
  if (id !== undefined && (top.has('result') || top.has('error'))) return { kind: 'response', id, method, params };
  return undefined;
}

/** Map key for an id: 1 and "1" are different requests. */
export function idKey(id: unknown): string {
  return typeof id === 'string' ? `s${id}` : `n${String(id)}`;
}

export interface ServerPeek {
  isResponse: boolean;
  /** The message, parsed when small; for a large one only `id` (results are never decoded). */
  parsed: Record<string, unknown> | undefined;
}

export function peekServerMessage(data: Buffer): ServerPeek {
  if (data.length > PARSE_LIMIT) {
    const top = objectRanges(data);
    if (!top) return { isResponse: false, parsed: undefined };
    const isResponse = !top.has('method') && top.has('id');
    return { isResponse, parsed: isResponse ? { id: smallValue(data, top, 'id') } : undefined };
  }
  let parsed: Record<string, unknown>;
  try {
    parsed = JSON.parse(data.toString('utf8')) as Record<string, unknown>;
  } catch {
    return { isResponse: false, parsed: undefined };
  }
  if (parsed === null || typeof parsed !== 'object') return { isResponse: false, parsed: undefined };
  return { isResponse: !('method' in parsed) && 'id' in parsed, parsed };
}

/** Methods that change nothing on the server, so sending them twice is harmless. */
export const IDEMPOTENT = new Set([
  'initialize',
  'ping',
  'server/discover',
  'tools/list',
  'prompts/list',
  'prompts/get',
  'resources/list',
  'resources/templates/list',
  'resources/read',
  'completion/complete',
  'logging/setLevel',
]);

/** A JSON-RPC error response, serialized. `id` is the client's id as it sent it. */
export function errorResponse(
  id: JsonRpcId | null,
  code: number,
  message: string,
  data?: Record<string, unknown>,
): string {
  return JSON.stringify({ jsonrpc: '2.0', id, error: data ? { code, message, data } : { code, message } });
}
