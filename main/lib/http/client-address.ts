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

/**
 * The key an address is limited by (connection caps, rate limits): an IPv4
 * address as it is (also when written IPv4-mapped, ::ffff:a.b.c.d), an IPv6
 * address by its /64, the smallest block one subscriber is given: counted
 * one by one, a single host could take a fresh address for every connection.
 */
export function addressBucket(address: string): string {
  const a = address.replace(/^::ffff:(?=\d+\.\d+\.\d+\.\d+$)/i, '');
  if (!a.includes(':')) return a;
  const [head = '', tail] = a.split('%')[0]!.split('::');
  const left = head ? head.split(':') : [];
  const right = tail ? tail.split(':') : [];
  const groups =
    tail === undefined
      ? left
      : [...left, ...Array<string>(Math.max(0, 8 - left.length - right.length)).fill('0'), ...right];
  return `${groups
    .slice(0, 4)
    .map((g) => (/^[0-9a-f]{1,4}$/i.test(g) ? parseInt(g, 16).toString(16) : '0'))
    .join(':')}::/64`;
}
