import type { IncomingMessage, ServerResponse } from 'node:http';
import type { AdminAuth, AdminPrincipal } from './admin-auth.ts';
import { CSRF_HEADER } from '../contract/api.ts';
import type { ErrorCode } from '../contract/errors.ts';
import { HttpError } from '../lib/http/http-error.ts';
import { adminEnvelope } from '../lib/http/envelope.ts';
import { answerMeta } from '../lib/http/compose.ts';
import { sendError as sendRefusal } from '../lib/http/send.ts';

const sendError = (res: ServerResponse, code: ErrorCode, message: string, headers?: Record<string, string>) =>
  sendRefusal(res, new HttpError(code, message, headers ? { headers } : {}), adminEnvelope, answerMeta(res.req, res));

const STATE_CHANGING = new Set(['POST', 'PUT', 'PATCH', 'DELETE']);

/**
 * The one gate in front of the admin API and the local pro REST: a browser
 * request must come from the console's own origin; the caller needs an admin
 * session, the admin key or a manage_options token; and a state-changing call
 * made with the session cookie must carry X-Gatehouse-CSRF (which a
 * cross-site form cannot send). Answers the refusal itself and returns null.
 */
export function admitAdmin(req: IncomingMessage, res: ServerResponse, auth: AdminAuth, ownOrigin: string): AdminPrincipal | null {
  const origin = req.headers.origin;
  if (origin !== undefined && origin !== ownOrigin) return void sendError(res, 'forbidden', 'the admin API answers only the console\'s own origin'), null;
  if (req.headers['sec-fetch-site'] === 'cross-site') return void sendError(res, 'forbidden', 'cross-site request refused'), null;
  const who = auth.principal(req);
  if (!who) {
    sendError(res, 'unauthorized', 'log in through the console link printed by `gatehouse serve`, or send the admin key / a manage_options token as a Bearer token', { 'WWW-Authenticate': 'Bearer realm="gatehouse-admin"' });
    return null;
  }
  if (who.kind === 'session' && STATE_CHANGING.has(req.method ?? 'GET') && req.headers[CSRF_HEADER.toLowerCase()] !== '1') {
    return void sendError(res, 'forbidden', `missing ${CSRF_HEADER} header`), null;
  }
  return who;
}
