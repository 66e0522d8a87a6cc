import type { ServerResponse } from 'node:http';
import { SERVER_INFO_META_KEY, SUBSCRIPTION_ID_META_KEY } from '@modelcontextprotocol/server';
import { SERVER_INFO } from './server-factory.ts';

/**
 * Ends a 2026-07-28 `subscriptions/listen` stream the server closes (the
 * token's oldest past its bound, a revoked token, shutdown) the way the spec
 * closes one: the listen request's result (`resultType: "complete"`, the
 * subscription id and the server's identity in `_meta`) as the last event,
 * then the end of the response, so the client knows the subscription ended
 * rather than seeing a cut connection. The SDK writes the same frame when it
 * closes a stream itself. A stream whose answer has not started yet is cut.
 */
export function endListenStream(res: ServerResponse, id: string | number): void {
  if (res.writableEnded || res.destroyed) return;
  if (!res.headersSent) {
    res.destroy();
    return;
  }
  const result = {
    jsonrpc: '2.0',
    id,
    result: { resultType: 'complete', _meta: { [SUBSCRIPTION_ID_META_KEY]: id, [SERVER_INFO_META_KEY]: SERVER_INFO } },
  };
  res.end(`event: message\ndata: ${JSON.stringify(result)}\n\n`);
}
