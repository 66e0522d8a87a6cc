import type { IncomingMessage, ServerResponse } from 'node:http';
import { validateOriginHeader } from '@modelcontextprotocol/server';
import { HttpError } from './http-error.ts';
import { printable } from './host.ts';

export interface CorsPolicy {
  /** allowed origins (`scheme://host[:port]`, or '*'); the `cors` setting */
  origins: readonly string[];
  /** the methods a preflight may ask for, e.g. 'POST, OPTIONS' */
  methods: string;
  /** request headers a browser may send */
  allowHeaders: string;
  /** response headers a browser may read */
  exposeHeaders: string;
  /** how long (s) a browser may cache the preflight; default 600 */
  maxAge?: number;
}

export const originAllowed = (origin: string, origins: readonly string[]): boolean =>
  origins.includes('*') || origins.includes(origin.replace(/\/$/, ''));

/**
 * No Origin: a non-browser client, allowed. A present Origin passes when it is
 * in `origins`, or when its hostname is one the Host check accepts (`sameHost`:
 * loopback names, the bind address, extra hosts; any port) — the MCP SDK's own
 * localhost origin rule (validateOriginHeader), which the conformance suite's
 * dns-rebinding scenario requires. That grants no CORS: a browser still needs
 * `origins` to pass the preflight and read answers.
 */
export function checkOrigin(
  req: IncomingMessage,
  origins: readonly string[],
  sameHost: ReadonlySet<string> = new Set(),
): HttpError | null {
  const origin = req.headers.origin;
  if (origin === undefined || originAllowed(origin, origins)) return null;
  if (sameHost.size > 0 && validateOriginHeader(origin, [...sameHost]).ok) return null;
  return new HttpError(
    'forbidden',
    `Origin '${printable(origin)}' is not allowed: add it to the cors setting to let a browser call the endpoint`,
  );
}

/** Response headers for an allowed browser origin; none otherwise. */
export function corsHeaders(req: IncomingMessage, policy: CorsPolicy): Record<string, string> {
  const origin = req.headers.origin;
  if (!origin || !originAllowed(origin, policy.origins)) return {};
  return {
    'Access-Control-Allow-Origin': origin,
    'Access-Control-Expose-Headers': policy.exposeHeaders,
    Vary: 'Origin',
  };
}

/** OPTIONS: the CORS preflight, answered here (204) or refused (403). */
export function answerPreflight(req: IncomingMessage, res: ServerResponse, policy: CorsPolicy): HttpError | null {
  const origin = req.headers.origin;
  if (origin !== undefined && !originAllowed(origin, policy.origins))
    return new HttpError('forbidden', `Origin '${printable(origin)}' is not allowed by the cors setting`);
  res.writeHead(204, {
    Allow: policy.methods,
    ...(origin
      ? {
          'Access-Control-Allow-Origin': origin,
          'Access-Control-Allow-Methods': policy.methods,
          'Access-Control-Allow-Headers': policy.allowHeaders,
          'Access-Control-Max-Age': String(policy.maxAge ?? 600),
          Vary: 'Origin',
        }
      : {}),
  });
  res.end();
  return null;
}
