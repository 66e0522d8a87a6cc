import type { IncomingMessage } from 'node:http';

/** An address or an obfuscated node name (RFC 7239 `_hidden`); anything else from a header is not used. */
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
 * Forwarded or X-Forwarded-For. Proxies append to what the caller sent, so
 * every element before the last is the caller's own text; the first one was
 * taken before, and a caller minted a fresh rate-limit key per request with
 * it. A forwarded value that is not address-shaped (huge, or garbage) is
 * ignored in favour of the peer, so a client cannot mint unbounded rate-limit
 * keys or log lines with it.
 */
export function clientAddress(req: IncomingMessage, trustProxy: boolean): string {
  const peer = req.socket.remoteAddress ?? 'unknown';
  if (!trustProxy) return peer;
  const forwarded = lastElement(req.headers.forwarded);
  if (forwarded) {
    const m = /for=("?\[?)([^\]";,\s]+)/i.exec(forwarded);
    const named = m?.[2]?.replace(/:\d+$/, (p) => (m[2]!.includes('.') ? '' : p));
    if (named && ADDRESS.test(named)) return named;
  }
  const last = lastElement(req.headers['x-forwarded-for']);
  return last && ADDRESS.test(last) ? last : peer;
}
