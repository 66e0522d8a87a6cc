import { createHash, timingSafeEqual } from 'node:crypto';
import type { IncomingMessage } from 'node:http';
import type { Guard } from '../../../main/lib/http/compose.ts';
import { HttpError } from '../../../main/lib/http/http-error.ts';
import type { CloudRequest } from '../cloud-request.ts';

const sha = (s: string) => createHash('sha256').update(s).digest();
const LOOPBACK = /^(127\.\d+\.\d+\.\d+|::1|::ffff:127\.\d+\.\d+\.\d+)$/;

/** Headers a reverse proxy adds (nginx's usual X-Real-IP among them, which comes without X-Forwarded-For). */
const PROXY_HEADERS = ['x-forwarded-for', 'forwarded', 'x-real-ip', 'via'];

/**
 * Whether a request may read /metrics (docs/decisions.md): with a metrics
 * token set, only one carrying it as a Bearer token; without one, only a
 * request made on this host: a loopback peer with no proxy's header (a
 * reverse proxy on the same host would otherwise pass the internet's
 * requests off as local), and never behind a trusted proxy (`trustProxy`:
 * the loopback peer is the proxy, whatever headers it writes).
 */
export function mayReadMetrics(req: IncomingMessage, token: string | undefined, trustProxy = false): boolean {
  if (token) {
    const m = /^Bearer\s+(\S+)\s*$/i.exec(req.headers.authorization ?? '');
    return !!m && timingSafeEqual(sha(m[1]!), sha(token));
  }
  const forwarded = trustProxy || PROXY_HEADERS.some((h) => req.headers[h] !== undefined);
  return !forwarded && LOOPBACK.test(req.socket.remoteAddress ?? '');
}

/** /metrics is the operator's: anyone else gets the 404 of a path that does not exist. */
export function metricsAccess(token: string | undefined, trustProxy = false): Guard<CloudRequest> {
  return (c) =>
    c.entry?.name !== 'metrics' || mayReadMetrics(c.req, token, trustProxy)
      ? null
      : new HttpError('not_found', `no endpoint ${c.req.method} ${c.path}: see docs/cloud-gateway.md`);
}
