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
  capConnections(server, l.maxConnections, l.maxConnectionsPerAddress);
  return server;
}

/**
 * A connection over a cap is answered, not reset: 503 with Retry-After and the cap in words, then closed,
 * before a byte of its request is parsed. (Node's own `maxConnections` destroys the socket, which a
 * client sees as ECONNRESET, a fault, not as "busy: retry".)
 */
function refuse(socket: Socket, why: string): void {
  // Its request is read and dropped: closing with unread bytes would send a reset, which loses the answer.
  socket.resume();
  const body = JSON.stringify({ ok: false, code: 'service_unavailable', message: `${why}: retry in a second` });
  socket.end(
    `HTTP/1.1 503 Service Unavailable\r\nRetry-After: 1\r\nContent-Type: application/json\r\nConnection: close\r\nContent-Length: ${Buffer.byteLength(body)}\r\n\r\n${body}`,
  );
  // A peer that never reads its answer must not hold the socket.
  socket.setTimeout(5_000, () => socket.destroy());
}

/** The total cap and the cap per peer address (0 = none), counted from the first byte. */
function capConnections(server: Server, total: number, perAddress: number): void {
  const open = new Map<string, number>();
  let all = 0;
  const byAddress = perAddress > 0 && perAddress < total;
  server.prependListener('connection', (socket: Socket) => {
    if (all >= total) return refuse(socket, `this service holds ${total} connections, its most`);
    // An IPv4 peer on a dual-stack socket is ::ffff:a.b.c.d: one address either way; an IPv6 peer counts by its /64.
    const peer = byAddress ? addressBucket(socket.remoteAddress ?? '') : '';
    const n = open.get(peer) ?? 0;
    if (byAddress && n >= perAddress)
      return refuse(socket, `this address holds ${perAddress} connections, the most one address may`);
    all++;
    open.set(peer, n + 1);
    socket.once('close', () => {
      all--;
      const left = (open.get(peer) ?? 1) - 1;
      if (left > 0) open.set(peer, left);
      else open.delete(peer);
    });
  });
}
