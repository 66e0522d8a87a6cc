import type { IncomingMessage } from 'node:http';
import { localhostAllowedHostnames, validateHostHeader } from '@modelcontextprotocol/server';
import { HttpError } from './http-error.ts';

/**
 * RFC 9110 `Host`: a name or an address, optionally a port, nothing else. The
 * SDK's validator parses the value as a URL and so accepts `user@127.0.0.1`
 * (user info) as 127.0.0.1; such a value later breaks code that builds a URL
 * from it (a fetch Request refuses credentials), so it is refused here first.
 */
const HOST_SYNTAX = /^(?:\[[0-9A-Fa-f:.]{2,45}\]|[A-Za-z0-9](?:[A-Za-z0-9.-]{0,251}[A-Za-z0-9])?)(?::\d{1,5})?$/;

/** Hostnames a request's Host header may name; anything else is DNS rebinding. */
export function allowedHostnames(bindHost: string, extra: readonly string[] = []): Set<string> {
  const names = new Set([...localhostAllowedHostnames(), ...extra.map((h) => h.toLowerCase())]);
  if (bindHost !== '0.0.0.0' && bindHost !== '::')
    names.add(bindHost.includes(':') ? `[${bindHost}]` : bindHost.toLowerCase());
  return names;
}

/**
 * The DNS-rebinding guard: a malformed Host is a 400, a host not in `allowed`
 * a 403; the SDK's validateHostHeader decides which names match.
 */
export function checkHost(req: IncomingMessage, allowed: ReadonlySet<string>): HttpError | null {
  const host = req.headers.host;
  if (host === undefined || !HOST_SYNTAX.test(host)) {
    return new HttpError(
      'invalid_request',
      `the Host header '${printable(host ?? '')}' is missing or malformed: send a host name or address, optionally with a port`,
    );
  }
  const r = validateHostHeader(host.toLowerCase(), [...allowed]);
  return r.ok
    ? null
    : new HttpError('forbidden', `Host '${printable(host)}' is not allowed (DNS rebinding protection)`);
}

/** A header value fit for a message: no control characters, bounded. */
export function printable(value: string, max = 100): string {
  // eslint-disable-next-line no-control-regex
  const clean = value.replace(/[\u0000-\u001f\u007f-\u009f]/g, '?');
  return clean.length > max ? `${clean.slice(0, max)}…` : clean;
}
