import type { IncomingMessage, ServerResponse } from 'node:http';
import { fail, type HttpFailure } from '../http-failure.ts';

const ALLOW_HEADERS = 'Authorization, Content-Type, Accept, Mcp-Protocol-Version, Mcp-Session-Id, Mcp-Method, Mcp-Name, Last-Event-ID, X-Request-Id';
const EXPOSE_HEADERS = 'Mcp-Session-Id, Mcp-Protocol-Version, WWW-Authenticate, Retry-After, RateLimit-Limit, RateLimit-Remaining, RateLimit-Reset, RateLimit-Policy, X-Request-Id';

export const originAllowed = (origin: string, cors: readonly string[]): boolean => cors.includes('*') || cors.includes(origin.replace(/\/$/, ''));

/** No Origin: a non-browser client, allowed. A present Origin must be in `cors`. */
export function checkOrigin(req: IncomingMessage, cors: readonly string[]): HttpFailure | null {
  const origin = req.headers.origin;
  if (origin === undefined) return null;
  if (!originAllowed(origin, cors)) return fail('forbidden', `Origin '${origin}' is not allowed: add it to the cors setting to let a browser call the endpoint`);
  return null;
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
