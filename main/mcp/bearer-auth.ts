import type { IncomingMessage } from 'node:http';
import type { Tokens, Verified } from '../core/identity/tokens.ts';
import { HttpError } from '../lib/http/http-error.ts';

export const WWW_AUTHENTICATE = 'Bearer realm="gatehouse", error="invalid_token"';

/** `Authorization: Bearer gth_…` -> the token record and its user, or a 401. */
export function authenticate(req: IncomingMessage, tokens: Tokens): Verified | HttpError {
  const header = req.headers.authorization;
  const unauthorized = (why: string, challenge = WWW_AUTHENTICATE) =>
    new HttpError('unauthorized', why, { headers: { 'WWW-Authenticate': challenge } });
  if (!header)
    return unauthorized(
      'missing bearer token: send Authorization: Bearer <token> (create one with `gatehouse tokens create`)',
      'Bearer realm="gatehouse"',
    );
  const m = /^Bearer\s+(\S+)\s*$/i.exec(header);
  if (!m) return unauthorized('malformed Authorization header: expected Bearer <token>');
  const verified = tokens.verify(m[1]!);
  return verified ?? unauthorized('token unknown or revoked: create one with `gatehouse tokens create`');
}
