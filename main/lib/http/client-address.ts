import type { IncomingMessage } from 'node:http';

/** An IPv4 or IPv6 address (or a name a proxy put there); anything else from the header is not used. */
const ADDRESS = /^[\w.:-]{1,64}$/;

/** The last of a list header's comma-separated elements (repeated headers count as one list). */
function lastElement(v: string | string[] | undefined): string | undefined {
  const s = Array.isArray(v) ? v.join(',') : v;
  if (s === undefined) return undefined;
  return s.slice(s.lastIndexOf(',') + 1).trim();
}

/**
 * The client's address: the socket peer, or (only when trust_proxy_headers is
 * on) the address the proxy in front of us saw: the last element of
 * X-Forwarded-For. Proxies append to what the caller sent, so every element
 * before the last is the caller's own text (taking the first let a caller mint
 * a fresh rate-limit key per request). Only that one header is read: a proxy
 * that appends X-Forwarded-For passes a caller's own `Forwarded` header on
 * untouched (and one that writes `Forwarded` passes X-Forwarded-For on), so
 * reading both let the caller pick the header it wrote. Behind a proxy that
 * writes only `Forwarded` every client is the proxy's address: one shared
 * budget, never one the caller chooses. A value that is not address-shaped
 * (huge, or garbage) is ignored in favour of the peer, so a client cannot
 * mint unbounded rate-limit keys or log lines with it.
 */
export function clientAddress(req: IncomingMessage, trustProxy: boolean): string {
  const peer = req.socket.remoteAddress ?? 'unknown';
  if (!trustProxy) return peer;
  const last = lastElement(req.headers['x-forwarded-for']);
  return last && ADDRESS.test(last) ? last : peer;
}
