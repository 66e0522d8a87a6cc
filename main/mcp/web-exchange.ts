import type { IncomingMessage, ServerResponse } from 'node:http';
import type { AuthInfo, McpHttpHandler } from '@modelcontextprotocol/server';
import { MISSING_CLIENT_CAPABILITY, type ErrorCode } from '../contract/errors.ts';
import { finishRpcError, type RpcErrorObject } from './rpc-errors.ts';

/** The request headers the SDK's handler reads; nothing else crosses (the bearer token least of all). */
const FORWARDED = [
  'content-type',
  'accept',
  'mcp-protocol-version',
  'mcp-method',
  'mcp-name',
  'mcp-session-id',
  'last-event-id',
] as const;
const URL_SEEN_BY_SDK = 'http://gatehouse.local/mcp';

/**
 * Serves one already-parsed 2026-07-28 message through the SDK's web-standard
 * handler (`createMcpHandler(...).fetch`), with less conversion than the
 * SDK's generic Node adapter: the body is handed over parsed (never
 * re-serialized), only the headers the SDK reads are copied, and a JSON
 * answer is written in one piece; only an SSE answer (a listen stream, a
 * call that streams progress) is pumped chunk by chunk with backpressure.
 * The client closing the connection aborts the exchange. A refusal the SDK
 * answers itself (its validation ladder: a bad envelope, headers that
 * disagree with the body) gets `data: {code, request_id}` like every other
 * Gatehouse error; its code is returned, so the refusal can be audited.
 */
export async function serveThroughSdk(
  handler: McpHttpHandler,
  req: IncomingMessage,
  res: ServerResponse,
  body: unknown,
  authInfo: AuthInfo,
  requestId: string,
): Promise<ErrorCode | null> {
  const abort = new AbortController();
  // Aborted only for a client gone before its whole answer was written, as the SDK's Node adapter does: aborting
  // every finished exchange made a DOMException and ran the request's abort listeners on each call
  // (docs/performance.md, "Every figure, one run"). A stream (SSE) answer keeps the abort on any close.
  let answered = false;
  res.once('close', () => {
    if (!answered) abort.abort();
  });
  // gone already, before the listener above was there to hear it
  if (res.destroyed) abort.abort();
  const headers = new Headers();
  for (const name of FORWARDED) {
    const v = req.headers[name];
    if (typeof v === 'string') headers.set(name, v);
  }
  const response = await handler.fetch(
    new Request(URL_SEEN_BY_SDK, { method: 'POST', headers, signal: abort.signal }),
    { authInfo, parsedBody: body },
  );
  const out: Record<string, string> = {};
  response.headers.forEach((value, name) => (out[name] = value));
  if (response.body === null) {
    answered = true;
    res.writeHead(response.status, out);
    res.end();
    return null;
  }
  if (!(out['content-type'] ?? '').startsWith('text/event-stream')) {
    let bytes: Buffer = Buffer.from(await response.arrayBuffer());
    let refused: ErrorCode | null = null;
    // An error answer (4xx, or a 200 carrying a JSON-RPC error such as the SDK's -32603 schema dump) is finished like ours.
    if (response.status >= 400 || bytes.includes('"error":{')) {
      const [finished, code, rpcCode] = withOurCode(bytes, requestId);
      bytes = finished;
      // Only a refusal of the HTTP exchange is audited here: an error a handler answered was audited by the
      // pipeline, a tool call's -32021 (HTTP 400 by the spec) included.
      const audited = rpcCode === MISSING_CLIENT_CAPABILITY && (body as { method?: unknown }).method === 'tools/call';
      if (response.status >= 400 && !audited) refused = code ?? 'invalid_request';
    }
    out['content-length'] = String(bytes.length);
    answered = true;
    res.writeHead(response.status, out);
    res.end(bytes);
    return refused;
  }
  res.writeHead(response.status, out);
  res.flushHeaders();
  const reader = response.body.getReader();
  try {
    for (;;) {
      const { done, value } = await reader.read();
      // ended by us (a listen stream closed with its result): nothing more may be written
      if (done || abort.signal.aborted || res.writableEnded) break;
      if (!res.write(value))
        await new Promise<void>((resolve) => {
          res.once('drain', resolve);
          res.once('close', resolve);
        });
    }
  } catch {
    // the stream ended abruptly (handler closed, client gone): end what was sent
  } finally {
    void reader.cancel().catch(() => {});
    res.end();
  }
  return null;
}

/** Finishes a JSON-RPC error body the SDK wrote (rpc-errors.ts); its string code is returned for the audit. */
function withOurCode(bytes: Buffer, requestId: string): [Buffer, ErrorCode | null, number | null] {
  try {
    const msg = JSON.parse(bytes.toString('utf8')) as { error?: RpcErrorObject };
    const error = msg.error;
    if (!error || typeof error.code !== 'number') return [bytes, null, null];
    msg.error = finishRpcError(error, requestId, '2026');
    return [Buffer.from(JSON.stringify(msg)), (msg.error.data as { code: ErrorCode }).code, msg.error.code];
  } catch {
    return [bytes, 'invalid_request', null];
  }
}
