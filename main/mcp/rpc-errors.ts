import { codeOfRpcError, JSONRPC_CODES, RESOURCE_NOT_FOUND_2025 } from '../contract/errors.ts';
import type { ProtocolEra } from '../contract/protocol-era.ts';

export interface RpcErrorObject {
  code: number;
  message: string;
  data?: unknown;
}

/** The SDK's dump of a request that failed its schema: a JSON array of issues with a path and a message. */
function schemaIssues(message: string): string | null {
  if (!message.startsWith('[')) return null;
  try {
    const issues = JSON.parse(message) as unknown;
    if (!Array.isArray(issues) || issues.length === 0) return null;
    const said = issues.map((i: { path?: unknown; message?: unknown }) => {
      const path = Array.isArray(i?.path) ? i.path.map(String).join('.') : '';
      return `${path || 'request'}: ${typeof i?.message === 'string' ? i.message : 'invalid'}`;
    });
    return said.slice(0, 5).join('; ');
  } catch {
    return null;
  }
}

/**
 * A JSON-RPC error on its way out of the MCP endpoint, finished the same way
 * for both eras: `data.code` (our string code) and `data.request_id` added; a
 * request the SDK found malformed (it answers -32603 with its raw schema
 * issues) becomes -32602 with the issues in words; and in the 2025 era a
 * resources/read of an unknown URI keeps that era's -32002 (the SDK answers
 * -32602 on every revision, as 2026-07-28 asks).
 */
export function finishRpcError(error: RpcErrorObject, requestId: string, era: ProtocolEra): RpcErrorObject {
  const data: Record<string, unknown> =
    typeof error.data === 'object' && error.data !== null && !Array.isArray(error.data)
      ? { ...(error.data as Record<string, unknown>) }
      : {};
  let { code, message } = error;
  const issues = code === JSONRPC_CODES.internal_error ? schemaIssues(message) : null;
  if (issues !== null) {
    code = JSONRPC_CODES.invalid_params;
    message = `invalid params: ${issues}`;
    data.code = 'invalid_params';
  }
  if (era === '2025' && data.code === 'not_found' && typeof data.uri === 'string') code = RESOURCE_NOT_FOUND_2025;
  if (typeof data.code !== 'string') data.code = codeOfRpcError(code);
  data.request_id ??= requestId;
  return { code, message, data };
}
