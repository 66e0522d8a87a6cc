import { CloudError } from '../errors.ts';
import { sqlState } from './db.ts';
import { DatabaseUnavailable } from './db-unavailable.ts';

/**
 * A database that cannot be reached or entered, as one clear error instead
 * of a driver's stack: where (the URL without its password), what went
 * wrong, and what to check. The CLI exits with its own code for it.
 */
export class DatabaseUnreachable extends CloudError {
  constructor(message: string, database: string) {
    super('gateway_unavailable', message, { database });
    this.name = 'DatabaseUnreachable';
  }
}

const NETWORK: Record<string, string> = {
  ECONNREFUSED: 'the connection was refused (is PostgreSQL running there, on that port?)',
  ENOTFOUND: 'the host name does not resolve',
  EAI_AGAIN: 'the host name could not be resolved just now',
  ETIMEDOUT: 'the connection timed out',
  EHOSTUNREACH: 'the host is unreachable',
  ENETUNREACH: 'the network is unreachable',
  ECONNRESET: 'the server closed the connection',
};
const SERVER: Record<string, string> = {
  '28P01': 'the password was refused',
  '28000': 'the server refused this user',
  '3D000': 'the database does not exist (create it first: createdb NAME)',
  '57P03': 'the server is starting up or shutting down',
};

/** The URL as it can be shown: no password, no query (it may hold one). */
export function shownUrl(url: string): string {
  try {
    const u = new URL(url);
    return `${u.protocol}//${u.username ? `${decodeURIComponent(u.username)}@` : ''}${u.host}${u.pathname}`;
  } catch {
    return 'the database URL';
  }
}

function why(e: unknown): string | null {
  // The adapters turn a lost connection into a 503 for sites; the operator is told the driver's reason.
  if (e instanceof DatabaseUnavailable && e.fault !== undefined) return why(e.fault);
  const err = e as { code?: unknown; errors?: Array<{ code?: unknown }>; message?: unknown } | null;
  const net =
    typeof err?.code === 'string'
      ? err.code
      : typeof err?.errors?.[0]?.code === 'string'
        ? err.errors[0].code
        : undefined;
  if (net && NETWORK[net]) return NETWORK[net];
  const state = sqlState(e);
  if (state && SERVER[state]) return SERVER[state];
  if (typeof err?.message === 'string' && /Connection terminated|connection timeout/i.test(err.message))
    return 'the connection was cut before the server answered';
  return null;
}

/** Runs the first statements of a start on the database; a connection failure becomes DatabaseUnreachable. */
export async function reachable<T>(fn: () => Promise<T>, url: string | undefined): Promise<T> {
  try {
    return await fn();
  } catch (e) {
    const reason = url ? why(e) : null;
    if (!reason || !url) throw e;
    throw new DatabaseUnreachable(
      `cannot use the database at ${shownUrl(url)}: ${reason}. Check --database-url or DATABASE_URL`,
      shownUrl(url),
    );
  }
}
