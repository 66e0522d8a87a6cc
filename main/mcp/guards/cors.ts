import type { IncomingMessage, ServerResponse } from 'node:http';
import { fail, type HttpFailure } from '../http-failure.ts';

const ALLOW_HEADERS = 'Authorization, Content-Type, Accept, Mcp-Protocol-Version, Mcp-Session-Id, Mcp-Method, Mcp-Name, Last-Event-ID, X-Request-Id';
const EXPOSE_HEADERS = 'Mcp-Session-Id, Mcp-Protocol-Version, WWW-Authenticate, Retry-After, RateLimit-Limit, RateLimit-Remaining, RateLimit-Reset, RateLimit-Policy, X-Request-Id';

export const originAllowed = (origin: string, cors: readonly string[]): boolean => cors.includes('*') || cors.includes(origin.replace(/\/$/, ''));

/** The hostname of an Origin value; null for `null` or anything that is not an origin URL. */
function originHostname(origin: string): string | null {
  try {
    const u = new URL(origin);
    return u.protocol === 'http:' || u.protocol === 'https:' ? u.hostname.toLowerCase() : null;
  } catch {
    return null;
  }
}

/**
 * No Origin: a non-browser client, allowed. A present Origin passes when it is in
 * `cors`, or when its hostname is one the Host check accepts (loopback names, the
 * bind address, configured extra hosts; any port): such a page is served from this
 * machine, so it is neither DNS rebinding nor a foreign site. This is the MCP SDK's
 * own localhost policy, and the conformance suite's dns-rebinding-protection
 * scenario requires it. It does not grant CORS: a browser still needs `cors` to
 * pass the preflight and read responses, and every request still needs a token.
 */
export function checkOrigin(req: IncomingMessage, cors: readonly string[], sameHost: ReadonlySet<string> = new Set()): HttpFailure | null {
  const origin = req.headers.origin;
  if (origin === undefined || originAllowed(origin, cors)) return null;
  const name = originHostname(origin);
  if (name !== null && sameHost.has(name)) return null;
  return fail('forbidden', `Origin '${origin}' is not allowed: add it to the cors setting to let a browser call the endpoint`);
}

/** Response headers for an allowed browser origin. */
export function corsHeaders(req: IncomingMessage, cors: readonly string[]): Record<string, string> {
  const origin = req.headers.origin;
  if (!origin || !originAllowed(origin, cors)) return {};
  return { 'Access-Control-Allow-Origin': origin, 'Access-Control-Expose-Headers': EXPOSE_HEADERS, Vary: 'Origin' };
}

/** OPTIONS: the CORS preflight, governed by the `cors` setting. */
export function answerPreflight(req: IncomingMessage, res: ServerResponse, cors: readonly string[]): HttpFailure | null {
  const origin = req.headers.origin;
  if (origin !== undefined && !originAllowed(origin, cors)) return fail('forbidden', `Origin '${origin}' is not allowed by the cors setting`);
  res.writeHead(204, {
    Allow: 'POST, OPTIONS',
    ...(origin
      ? { 'Access-Control-Allow-Origin': origin, 'Access-Control-Allow-Methods': 'POST, OPTIONS', 'Access-Control-Allow-Headers': ALLOW_HEADERS, 'Access-Control-Max-Age': '600', Vary: 'Origin' }
      : {}),
  });
  res.end();
  return null;
}
