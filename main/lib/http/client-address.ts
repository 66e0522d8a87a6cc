import type { IncomingMessage } from 'node:http';

/** An address or an obfuscated node name (RFC 7239 `_hidden`); anything else from a header is not used. */
const ADDRESS = /^[\w.:-]{1,64}$/;

/**
 * The client's address: the socket peer, or (only when trust_proxy_headers is
 * on) the first hop named by Forwarded or X-Forwarded-For. A forwarded value
 * that is not address-shaped (huge, or garbage) is ignored in favour of the
 * peer, so a client cannot mint unbounded rate-limit keys or log lines with it.
 */
export function clientAddress(req: IncomingMessage, trustProxy: boolean): string {
  const peer = req.socket.remoteAddress ?? 'unknown';
  if (!trustProxy) return peer;
  const forwarded = req.headers.forwarded;
  if (typeof forwarded === 'string') {
    const m = /for=("?\[?)([^\]";,\s]+)/i.exec(forwarded);
    const named = m?.[2]?.replace(/:\d+$/, (p) => (m[2]!.includes('.') ? '' : p));
    if (named && ADDRESS.test(named)) return named;
  }
  const xff = req.headers['x-forwarded-for'];
  const first = (Array.isArray(xff) ? xff[0] : xff)?.split(',')[0]?.trim();
  return first && ADDRESS.test(first) ? first : peer;
}
