import type { ClientMessage } from './envelope.ts';

/**
 * Protocol revision 2026-07-28 moves the version into each request's `_meta`
 * and wants it mirrored in headers (`MCP-Protocol-Version`, `Mcp-Method`,
 * `Mcp-Name`), which servers cross-check against the body. A 2025-era
 * message has no such `_meta` key and gets no extra header.
 */

// The spec's reserved `_meta` key; the bridge does not load the SDK to import it.
const PROTOCOL_VERSION_META_KEY = 'io.modelcontextprotocol/protocolVersion';

// Which params field `Mcp-Name` mirrors, per method.
const NAME_SOURCE: Record<string, string> = {
  'tools/call': 'name',
  'prompts/get': 'name',
  'resources/read': 'uri',
  'tasks/get': 'taskId',
  'tasks/update': 'taskId',
  'tasks/cancel': 'taskId',
};

export function modernHeaders(msg: ClientMessage): Record<string, string> | undefined {
  if (msg.kind !== 'request' || !msg.params) return undefined;
  const meta = msg.params._meta as Record<string, unknown> | undefined;
  const version = meta?.[PROTOCOL_VERSION_META_KEY];
  if (typeof version !== 'string') return undefined;
  const h: Record<string, string> = { 'mcp-protocol-version': version, 'mcp-method': msg.method! };
  const field = Object.hasOwn(NAME_SOURCE, msg.method!) ? NAME_SOURCE[msg.method!] : undefined;
  const value = field ? msg.params[field] : undefined;
  if (typeof value === 'string') h['mcp-name'] = encodeFieldValue(value);
  return h;
}

/** Plain printable ASCII goes as is; anything else as `=?base64?<utf-8 base64>?=`, as the spec says. */
export function encodeFieldValue(s: string): string {
  const plain =
    s.length > 0 && s === s.trim() && /^[\t\x20-\x7e]*$/.test(s) && !(s.startsWith('=?base64?') && s.endsWith('?='));
  return plain ? s : `=?base64?${Buffer.from(s, 'utf8').toString('base64')}?=`;
}
