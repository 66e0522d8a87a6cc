import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { Socket } from 'node:net';
import { addressBucket } from './client-address.ts';

export interface ServerLimits {
  /** open sockets at most; more are closed at once (default 256) */
  maxConnections?: number;
  /**
   * open sockets from one peer address at most (default 64, a quarter of
   * the default cap; 0 = no cap), so one address cannot take every slot. The
   * peer is the socket's: behind a proxy every client shares the proxy's.
   */
  maxConnectionsPerAddress?: number;
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
  maxConnectionsPerAddress: 64,
  headersTimeoutMs: 15_000,
  requestTimeoutMs: 60_000,
  keepAliveTimeoutMs: 65_000,
  checkIntervalMs: 5_000,
};

/**
 * A node:http server with bounds on what slow or many clients can hold: a
 * connection cap, a cap per peer address, and header/request timeouts (slow
 * headers and a stalled upload are cut with 408 by Node). With BodyBudget
 * these bound the memory of stalled bodies.
 */
export function createEdgeServer(
  handler: (req: IncomingMessage, res: ServerResponse) => void,
  limits: ServerLimits = {},
): Server {
  // A limit given as undefined keeps its default (a spread would let it through).
  const l = Object.fromEntries(
    Object.entries(DEFAULT_SERVER_LIMITS).map(([k, v]) => [k, limits[k as keyof ServerLimits] ?? v]),
  ) as Required<ServerLimits>;
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
  if (l.maxConnectionsPerAddress > 0 && l.maxConnectionsPerAddress < l.maxConnections)
    capPerAddress(server, l.maxConnectionsPerAddress);
  return server;
}

/** Closes a new socket at once when its peer address already holds `cap` (before a byte is parsed). */
function capPerAddress(server: Server, cap: number): void {
  const open = new Map<string, number>();
  server.prependListener('connection', (socket: Socket) => {
    // An IPv4 peer on a dual-stack socket is ::ffff:a.b.c.d: one address either way; an IPv6 peer counts by its /64.
    const peer = addressBucket(socket.remoteAddress ?? '');
    const n = open.get(peer) ?? 0;
    if (n >= cap) {
      socket.destroy();
      return;
    }
    open.set(peer, n + 1);
    socket.once('close', () => {
      const left = (open.get(peer) ?? 1) - 1;
      if (left > 0) open.set(peer, left);
      else open.delete(peer);
    });
  });
}
