import type { IncomingMessage } from 'node:http';
import { HttpError } from './http-error.ts';

/** decodeURIComponent that answers 400 for a malformed escape instead of throwing a URIError. */
export function decodePathPart(raw: string): string {
  if (!raw.includes('%')) return raw;
  try {
    return decodeURIComponent(raw);
  } catch {
    throw new HttpError('invalid_request', `malformed percent-escape in the path: '${raw.slice(0, 100)}'`);
  }
}

export interface RequestTarget {
  /** the path as sent (still percent-encoded), always starting with '/' */
  path: string;
  query: URLSearchParams;
}

/**
 * The path and query of a request, without building a URL object on the hot
 * path. Absolute-form targets (`GET http://host/p`, proxies) are reduced to
 * their path; anything else that does not start with '/' is a 400.
 */
export function requestTarget(req: IncomingMessage): RequestTarget {
  let raw = req.url ?? '/';
  if (!raw.startsWith('/')) {
    try {
      const u = new URL(raw);
      raw = `${u.pathname}${u.search}`;
    } catch {
      throw new HttpError('invalid_request', 'the request target must be a path starting with /');
    }
  }
  const q = raw.indexOf('?');
  return q < 0
    ? { path: raw, query: new URLSearchParams() }
    : { path: raw.slice(0, q), query: new URLSearchParams(raw.slice(q + 1)) };
}
