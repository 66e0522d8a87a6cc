import type { IncomingMessage } from 'node:http';
import { fail, type HttpFailure } from '../http-failure.ts';

const LOOPBACK = ['localhost', '127.0.0.1', '[::1]'];

/** Hostnames a request's Host header may name; anything else is DNS rebinding. */
export function allowedHostnames(bindHost: string, extra: readonly string[] = []): Set<string> {
  const names = new Set([...LOOPBACK, ...extra.map((h) => h.toLowerCase())]);
  if (bindHost !== '0.0.0.0' && bindHost !== '::') names.add(bindHost.includes(':') ? `[${bindHost}]` : bindHost.toLowerCase());
  return names;
}

export function hostnameOf(hostHeader: string): string | null {
  try {
    return new URL(`http://${hostHeader}`).hostname.toLowerCase();
  } catch {
    return null;
  }
}

export function checkHost(req: IncomingMessage, allowed: ReadonlySet<string>): HttpFailure | null {
  const host = req.headers.host;
  const name = host ? hostnameOf(host) : null;
  if (!name || !allowed.has(name)) return fail('forbidden', `Host '${host ?? ''}' is not allowed (DNS rebinding protection)`);
  return null;
}
