import { CloudError } from '../errors.ts';
import { recordDbError } from '../metrics.ts';
import { sqlState } from './db.ts';

/** Seconds a site is asked to wait while the database is away: long enough for a restart, short for a blip. */
export const DB_RETRY_AFTER_S = 5;

/**
 * The database cannot be reached right now (stopped, restarting, the
 * connection dropped): answered 503 gateway_unavailable with Retry-After.
 * The site sees no host, port or driver text; `reason` (the driver's
 * message) is for the service log only.
 */
export class DatabaseUnavailable extends CloudError {
  /** `fault`: the driver's own error, kept for the operator CLI's words on a start that cannot connect (never sent to a site) */
  constructor(
    readonly reason: string,
    readonly fault?: unknown,
  ) {
    super(
      'gateway_unavailable',
      'the gateway cannot reach its database right now: retry shortly',
      {},
      { retryAfter: DB_RETRY_AFTER_S },
    );
    this.name = 'DatabaseUnavailable';
  }
}

/** Node socket errors that mean "no connection", not "bad statement". */
const SOCKET_CODES = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'ETIMEDOUT',
  'EPIPE',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'ENOTFOUND',
  'EAI_AGAIN',
  'ECONNABORTED',
]);
/** node-postgres's own words for a lost or unusable connection, and pg-pool's connect timeout. */
const DRIVER_TEXT =
  /Connection terminated|not queryable|Client was closed|Connection is closed|timeout exceeded when trying to connect|PGlite is closed/i;

/** A server's error code (SQLSTATE: five digits or capitals), as opposed to a driver's or Node's. */
const SQLSTATE = /^[0-9A-Z]{5}$/;

/**
 * Whether an error is the database being away rather than our statement
 * failing: SQLSTATE class 08 (connection exception; not 08P01, a protocol
 * violation: our bug), 57P01-57P03 (shut down by the administrator, crash
 * recovery, not accepting connections yet), a socket error, or the driver
 * saying the connection is gone. A server's error is judged by its SQLSTATE
 * alone: its message may quote a value, which a caller can choose.
 */
export function isConnectionFault(e: unknown): boolean {
  if (e instanceof DatabaseUnavailable) return true;
  // A service's own refusal thrown inside a transaction passes through as it is, whatever its words.
  if (e instanceof CloudError) return false;
  const state = sqlState(e) ?? '';
  if (SOCKET_CODES.has(state)) return true; // Node puts its errno name in `code` too
  if (SQLSTATE.test(state))
    return (state.startsWith('08') && state !== '08P01') || state === '57P01' || state === '57P02' || state === '57P03';
  return e instanceof Error && DRIVER_TEXT.test(e.message);
}

/** A failed statement for the metrics (by kind), answered as what the caller should see. */
export function failedStatement(e: unknown): unknown {
  const out = asDbFault(e);
  recordDbError(out instanceof DatabaseUnavailable ? 'connection' : 'query');
  return out;
}

/** A connection fault as DatabaseUnavailable; any other error as it is. */
export function asDbFault(e: unknown): unknown {
  if (e instanceof DatabaseUnavailable || !isConnectionFault(e)) return e;
  return new DatabaseUnavailable(e instanceof Error ? e.message : String(e), e);
}

/**
 * A connection that could not be made, as DatabaseUnavailable whatever its code: while connecting, every failure
 * (a refused port, a Unix socket gone with the stopped server: ENOENT, a permission, a timeout) means the
 * database cannot be reached now, not that a statement is wrong.
 */
export function failedConnect(e: unknown): DatabaseUnavailable {
  recordDbError('connection');
  return e instanceof DatabaseUnavailable ? e : new DatabaseUnavailable(e instanceof Error ? e.message : String(e), e);
}
