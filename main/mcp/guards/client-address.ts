import type { IncomingMessage } from 'node:http';

/**
 * The client's address: the socket peer, or (only when trust_proxy_headers is
 * on) the first hop named by Forwarded or X-Forwarded-For.
 */
export function clientAddress(req: IncomingMessage, trustProxy: boolean): string {
  const peer = req.socket.remoteAddress ?? 'unknown';
  if (!trustProxy) return peer;
  const forwarded = req.headers.forwarded;
  if (typeof forwarded === 'string') {
    const m = /for=("?\[?)([^\]";,\s]+)/i.exec(forwarded);
    if (m?.[2]) return m[2].replace(/:\d+$/, (p) => (m[2]!.includes('.') ? '' : p));
  }
  const xff = req.headers['x-forwarded-for'];
  const first = (Array.isArray(xff) ? xff[0] : xff)?.split(',')[0]?.trim();
  return first || peer;
}
