import type { IncomingHttpHeaders } from 'node:http';
import type { JsonRpcId } from './envelope.ts';
import * as fail from './failures.ts';
import { isSessionGone } from './session.ts';
import { backoffDelay, parseRetryAfter } from '../main/lib/retry.ts';

/**
 * What the pump does with an HTTP answer to a request that carries neither
 * the response nor a 202: renew the session, send it again after a wait,
 * pass on the server's own JSON-RPC error, or fail it. Decided from the
 * status, the body and the attempt so far; the pump does the I/O.
 */
export type Refusal =
  | { then: 'renew' }
  | { then: 'retry'; waitMs: number; note?: string }
  | { then: 'answer'; line: string }
  | { then: 'fail'; failure: fail.Failure };

export const MAX_TRANSIENT_RETRIES = 3;
const MAX_RETRY_AFTER_MS = 30_000;

/** Transient retries shared by every try of one request; `backoff()` counts one and gives its delay. */
export interface Retries {
  readonly count: number;
  countOne(): void;
  backoff(): number;
}

/** Bounded, jittered: about 250 ms, 500 ms, 1 s (each up to a quarter less). */
export function transientRetries(): Retries {
  let n = 0;
  return {
    get count() {
      return n;
    },
    countOne: () => void n++,
    backoff: () => backoffDelay(++n, 250, 2000, 0.25),
  };
}

export interface Attempt {
  method: string;
  id: JsonRpcId;
  idempotent: boolean;
  /** the request went out on a session (so "session gone" can be repaired) */
  onSession: boolean;
  /** the session was renewed once already for this request */
  renewed: boolean;
  hasCredential: boolean;
  retries: Retries;
}

export function readRefusal(status: number, headers: IncomingHttpHeaders, body: Buffer, a: Attempt): Refusal {
  const said = fail.serverMessage(body);
  if (a.onSession && isSessionGone(status, said.text)) {
    // The server never handled it (unknown session), so sending it again is safe for any method.
    return a.renewed
      ? { then: 'fail', failure: fail.sessionLost('the new session was refused as well') }
      : { then: 'renew' };
  }
  if (status === 401) return { then: 'fail', failure: fail.unauthorized(a.hasCredential) };
  if (status === 403) return { then: 'fail', failure: fail.forbidden(said.text) };
  if (status === 503 && said.dataCode === 'gateway_disabled') return { then: 'fail', failure: fail.gatewayDisabled() };
  if (status === 429 || status === 503) {
    // Refused before handling: safe to send again for any method, after the wait the server asks for.
    const asked = parseRetryAfter(headers['retry-after']);
    const wait = asked ?? a.retries.backoff();
    if (asked !== undefined) a.retries.countOne();
    if (a.retries.count <= MAX_TRANSIENT_RETRIES && wait <= MAX_RETRY_AFTER_MS) {
      return {
        then: 'retry',
        waitMs: wait,
        note: `the server answered ${status}; retrying in ${Math.ceil(wait / 1000)} s`,
      };
    }
    return { then: 'fail', failure: status === 429 ? fail.rateLimited(wait) : fail.httpError(503, said.text) };
  }
  if ((status === 502 || status === 504) && a.idempotent && a.retries.count < MAX_TRANSIENT_RETRIES)
    return { then: 'retry', waitMs: a.retries.backoff() };
  // A JSON-RPC error in a 4xx body (400 invalid params, ...) is the server's own answer.
  const own = status < 500 ? ownError(body, a.id) : undefined;
  if (own) return { then: 'answer', line: own };
  return { then: 'fail', failure: fail.httpError(status, said.text) };
}

function ownError(body: Buffer, id: JsonRpcId): string | undefined {
  if (body.length === 0) return undefined;
  try {
    const parsed = JSON.parse(body.toString('utf8')) as { error?: unknown };
    if (parsed && typeof parsed.error === 'object' && parsed.error !== null)
      return JSON.stringify({ jsonrpc: '2.0', id, error: parsed.error });
  } catch {
    // not JSON: the caller reports the status instead
  }
  return undefined;
}
