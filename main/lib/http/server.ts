import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';

export interface ServerLimits {
  /** open sockets at most; more are closed at once (default 256) */
  maxConnections?: number;
  /** time to receive the request headers (default 15 s) */
  headersTimeoutMs?: number;
  /** time to receive the whole request, body included (default 60 s); answers are not limited */
  requestTimeoutMs?: number;
  /** an idle keep-alive socket is closed after this (default 65 s, above common proxies' 60 s) */
  keepAliveTimeoutMs?: number;
  /** how often Node checks the two timeouts above (default 5 s; Node's own is 30 s) */
  checkIntervalMs?: number;
}

export const DEFAULT_SERVER_LIMITS: Required<ServerLimits> = {
  maxConnections: 256,
  headersTimeoutMs: 15_000,
  requestTimeoutMs: 60_000,
  keepAliveTimeoutMs: 65_000,
  checkIntervalMs: 5_000,
};

/**
 * A node:http server with bounds on what slow or many clients can hold: a
 * connection cap and header/request timeouts (a stalled upload is cut with
 * 408 by Node). With BodyBudget these bound the memory of stalled bodies.
 */
export function createEdgeServer(handler: (req: IncomingMessage, res: ServerResponse) => void, limits: ServerLimits = {}): Server {
  const l = { ...DEFAULT_SERVER_LIMITS, ...limits };
  const server = createServer(
    {
      headersTimeout: Math.min(l.headersTimeoutMs, l.requestTimeoutMs),
      requestTimeout: l.requestTimeoutMs,
      keepAliveTimeout: l.keepAliveTimeoutMs,
      connectionsCheckingInterval: l.checkIntervalMs,
    },
    handler,
  );
  server.maxConnections = l.maxConnections;
  return server;
}
