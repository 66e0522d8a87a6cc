import type { ErrorCode } from '../main/contract/errors.ts';

/**
 * What the client is told when the bridge cannot get an answer: a JSON-RPC
 * error whose message says what to do, with `data.code` from the contract's
 * error codes. The numeric codes come from the contract too, loaded on the
 * first failure only (that module brings zod, which a healthy start-up skips).
 */

export interface Failure {
  code: ErrorCode;
  message: string;
  httpStatus?: number;
  /** Failures that say something about the set-up (401, 403, gateway off) get one stderr line each. */
  announce?: boolean;
}

let codes: Promise<Partial<Record<string, number>>> | undefined;

export async function jsonRpcCode(code: ErrorCode): Promise<number> {
  codes ??= import('../main/contract/errors.ts').then((m) => m.JSONRPC_CODES as Partial<Record<string, number>>);
  // -32000: the JSON-RPC "server error" code for failures the contract gives no number.
  return (await codes)[code] ?? -32000;
}

export function unauthorized(hasCredential: boolean): Failure {
  return {
    code: 'unauthorized',
    httpStatus: 401,
    announce: true,
    message: hasCredential
      ? 'token unknown or revoked: create one with `gatehouse tokens create --keychain ACCOUNT` and start the bridge with --token-keychain ACCOUNT (HTTP 401)'
      : 'the server wants a token and none is configured: create one with `gatehouse tokens create --keychain ACCOUNT` and start the bridge with --token-keychain ACCOUNT (or --token-env VAR) (HTTP 401)',
  };
}

export function forbidden(serverSays: string | undefined): Failure {
  return {
    code: 'forbidden',
    httpStatus: 403,
    announce: true,
    message: `the server refused this request (HTTP 403)${serverSays ? `: ${serverSays}` : ''}; check that the token's user may use this tool and that the endpoint allows this client`,
  };
}

export function gatewayDisabled(): Failure {
  return {
    code: 'gateway_disabled',
    httpStatus: 503,
    announce: true,
    message:
      'the gateway is switched off in Gatehouse settings: switch it on in the console, the tray or with `gatehouse settings set enabled true`, then try again',
  };
}

export function rateLimited(waitMs: number | undefined): Failure {
  const when = waitMs === undefined ? 'in a moment' : `in ${Math.ceil(waitMs / 1000)} s`;
  return { code: 'rate_limited', httpStatus: 429, message: `rate limited by the server (HTTP 429): try again ${when}` };
}

export function unreachable(reason: string, waitedMs: number): Failure {
  const waited = waitedMs >= 1000 ? ` (waited ${Math.round(waitedMs / 1000)} s)` : '';
  return { code: 'service_unavailable', message: `cannot reach the MCP endpoint${waited}: ${reason}` };
}

export function connectionLost(method: string): Failure {
  return {
    code: 'upstream_error',
    message: `the connection to the server was lost before the ${method} response arrived; it may have run, so the bridge did not send it again`,
  };
}

export function httpError(status: number, serverSays: string | undefined): Failure {
  return {
    code: 'upstream_error',
    httpStatus: status,
    message: `the server answered HTTP ${status}${serverSays ? `: ${serverSays}` : ''}`,
  };
}

/** The answer was cut off by the bridge's message bound (the request may have had its effect on the server). */
export function messageTooLarge(reason: string): Failure {
  return { code: 'upstream_error', message: `${reason}; the server's answer to this request was not delivered` };
}

export function internal(): Failure {
  return {
    code: 'internal_error',
    message: 'the bridge failed unexpectedly while forwarding this request; see its log (stderr)',
  };
}

export function sessionLost(reason: string): Failure {
  return { code: 'upstream_error', message: `the server ended the session and starting a new one failed: ${reason}` };
}

/** A short, single-line excerpt of an error body: the JSON-RPC error message when there is one. */
export function serverMessage(body: Buffer): { text: string | undefined; dataCode: string | undefined } {
  const raw = body.toString('utf8', 0, Math.min(body.length, 4096));
  try {
    const parsed = JSON.parse(raw) as { error?: { message?: unknown; data?: { code?: unknown } }; message?: unknown };
    const message = parsed.error?.message ?? parsed.message;
    const dataCode = parsed.error?.data?.code;
    return {
      text: typeof message === 'string' ? clip(message) : undefined,
      dataCode: typeof dataCode === 'string' ? dataCode : undefined,
    };
  } catch {
    const text = raw
      .replace(/<[^>]*>/g, ' ')
      .replace(/\s+/g, ' ')
      .trim();
    return { text: text ? clip(text) : undefined, dataCode: undefined };
  }
}

function clip(s: string): string {
  const one = s.replace(/\s+/g, ' ').trim();
  return one.length > 200 ? `${one.slice(0, 200)}…` : one;
}
