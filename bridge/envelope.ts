/**
 * The little the bridge reads of a JSON-RPC message: its id and method. It
 * never validates a message against the MCP schemas; the server does that.
 */

export type JsonRpcId = string | number;

export interface ClientMessage {
  kind: 'request' | 'notification' | 'response';
  id: JsonRpcId | undefined;
  method: string | undefined;
  params: Record<string, unknown> | undefined;
}

export function readClientMessage(line: Buffer): ClientMessage | undefined {
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

/** Map key for an id: 1 and "1" are different requests. */
export function idKey(id: unknown): string {
  return typeof id === 'string' ? `s${id}` : `n${String(id)}`;
}

// Larger server messages are taken to be the awaited response without parsing:
// notifications and server requests are small, and parsing megabytes costs time and memory.
const PEEK_LIMIT = 64 * 1024;

export interface ServerPeek {
  isResponse: boolean;
  /** Parsed message, when it was small enough to parse. */
  parsed: Record<string, unknown> | undefined;
}

export function peekServerMessage(data: Buffer): ServerPeek {
  if (data.length > PEEK_LIMIT) return { isResponse: true, parsed: undefined };
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
export function errorResponse(id: JsonRpcId | null, code: number, message: string, data?: Record<string, unknown>): string {
  return JSON.stringify({ jsonrpc: '2.0', id, error: data ? { code, message, data } : { code, message } });
}
