import { CSRF_HEADER } from '../../contract/api.ts';
import type { Guard } from '../../lib/http/compose.ts';
import { HttpError } from '../../lib/http/http-error.ts';
import type { AdminRequest } from './admin-request.ts';

const STATE_CHANGING = new Set(['POST', 'PUT', 'PATCH', 'DELETE']);

/** A state-changing call made with the session cookie must carry X-Gatehouse-CSRF, which a cross-site form cannot send. */
export const csrf: Guard<AdminRequest> = ({ req, who }) => {
  const bySession = who?.kind === 'person' && who.via === 'session';
  return bySession && STATE_CHANGING.has(req.method ?? 'GET') && req.headers[CSRF_HEADER.toLowerCase()] !== '1'
    ? new HttpError('forbidden', `missing ${CSRF_HEADER} header`)
    : null;
};
