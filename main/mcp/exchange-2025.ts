import type { ServerResponse } from 'node:http';
import type { AuthInfo, JSONRPCMessage, Transport, TransportSendOptions } from '@modelcontextprotocol/server';
import { finishRpcError } from './rpc-errors.ts';
import type { CallRoute, Routes2025 } from './routes-2025.ts';
import { answerText } from './list-cache.ts';

type Id = string | number;

/**
 * One 2025-era Streamable HTTP exchange served straight on Node's response,
 * for a stateless server instance: the SDK's own legacy leg converts every
 * request to a web Request and frames every answer as SSE, which cost a
 * third of each call. Here the answer is one JSON body, unless the handler
 * sends something related to the request before its result (progress, a
 * log message): then the answer becomes an SSE stream at that moment, as
 * the SDK's 2026-07-28 `auto` mode does. A client that drops the connection
 * cancels the request (the handler's signal aborts). JSON-RPC errors are
 * finished by rpc-errors.ts like every other error Gatehouse sends.
 */
export class Exchange2025 implements Transport {
  onclose?: () => void;
  onerror?: (error: Error) => void;
  onmessage?: <T extends JSONRPCMessage>(message: T, extra?: { authInfo?: AuthInfo }) => void;

  private id: Id | undefined;
  private streaming = false;
  private done = false;
  private finished: () => void = () => {};
  /** routing of what the client posts back about this exchange (its answers to our requests, a cancellation) */
  private readonly routed: Array<() => void> = [];

  constructor(
    private readonly res: ServerResponse,
    private readonly requestId: string,
    private readonly authInfo: AuthInfo,
    private readonly routes?: Routes2025,
  ) {}

  async start(): Promise<void> {}

  /** Hands the one message to the connected server; resolves once the exchange is answered. `route`: the call's cancellation route (Routes2025.open). */
  serve(message: JSONRPCMessage, route?: CallRoute): Promise<void> {
    const extra = { authInfo: this.authInfo };
    if (!('method' in message) || !('id' in message)) {
      // a notification or a posted response: nothing to answer but 202
      this.onmessage?.(message, extra);
      this.end(202, null);
      return Promise.resolve();
    }
    this.id = message.id;
    if (route) {
      route.deliver = (m) => {
        this.onmessage?.(m, extra);
        // Cancelled: no answer will come (the spec has the receiver send none), so end the HTTP answer empty and free the id.
        if ('method' in m && m.method === 'notifications/cancelled') this.endUnanswered();
      };
      this.routed.push(route.close);
    }
    const answered = new Promise<void>((resolve) => (this.finished = resolve));
    this.res.once('close', () => {
      if (this.done) return;
      // The client went away: cancel the handler, then let the exchange go.
      this.onmessage?.(
        {
          jsonrpc: '2.0',
          method: 'notifications/cancelled',
          params: { requestId: this.id!, reason: 'the client closed the connection' },
        },
        extra,
      );
      this.finish();
    });
    this.onmessage?.(message, extra);
    return answered;
  }

  async send(message: JSONRPCMessage, options?: TransportSendOptions): Promise<void> {
    if (this.done) return;
    const isAnswer = ('result' in message || 'error' in message) && message.id === this.id;
    if (isAnswer) {
      const text = 'error' in message ? JSON.stringify(this.withCode(message)) : answerText(message);
      if (this.streaming) {
        this.res.end(`event: message\ndata: ${text}\n\n`);
      } else {
        this.res.writeHead(200, {
          'Content-Type': 'application/json',
          'Content-Length': Buffer.byteLength(text),
          'Cache-Control': 'no-store',
        });
        this.res.end(text);
      }
      this.finish();
      return;
    }
    // Only messages about this request can travel on its answer; there is no session to carry others.
    if (options?.relatedRequestId !== this.id) return;
    if ('method' in message && 'id' in message) {
      // A request to the client (elicitation, sampling): its answer comes in another POST, routed back here.
      if (!this.routes) return;
      const original = message.id;
      const wire = this.routes.expect(this.authInfo.clientId, original, (m) =>
        this.onmessage?.(m, { authInfo: this.authInfo }),
      );
      this.routed.push(() => this.routes!.forgetAsk(wire));
      message = { ...message, id: wire };
    }
    if (!this.streaming) {
      this.streaming = true;
      this.res.writeHead(200, {
        'Content-Type': 'text/event-stream',
        'Cache-Control': 'no-cache, no-transform',
        Connection: 'keep-alive',
        'X-Accel-Buffering': 'no',
      });
    }
    this.res.write(`event: message\ndata: ${JSON.stringify(message)}\n\n`);
  }

  async close(): Promise<void> {
    if (!this.done) {
      // closed without an answer (the server shut down mid-call)
      if (!this.res.headersSent) this.end(503, null);
      else this.res.end();
      this.finish();
    }
    this.onclose?.();
  }

  /** Ends the exchange with no JSON-RPC answer: an event stream that closes without one. */
  private endUnanswered(): void {
    if (this.done) return;
    if (!this.streaming)
      this.res.writeHead(200, { 'Content-Type': 'text/event-stream', 'Cache-Control': 'no-cache, no-transform' });
    this.res.end();
    this.finish();
  }

  private withCode(message: Extract<JSONRPCMessage, { error: unknown }>): JSONRPCMessage {
    return { ...message, error: finishRpcError(message.error, this.requestId, '2025') };
  }

  private end(status: number, body: string | null): void {
    this.res.writeHead(
      status,
      body ? { 'Content-Type': 'application/json', 'Content-Length': Buffer.byteLength(body) } : {},
    );
    this.res.end(body ?? undefined);
  }

  private finish(): void {
    for (const forget of this.routed.splice(0)) forget();
    this.done = true;
    this.finished();
  }
}
