import type { Guard } from '../../lib/http/compose.ts';
import { HttpError } from '../../lib/http/http-error.ts';
import type { AdminRequest } from './admin-request.ts';

/**
 * Fetch Metadata: cookies are not port-scoped, so a page on another local port
 * is "same-site" and its requests carry the console's session cookie. Only the
 * console's own pages (same-origin) and non-browser clients get in.
 */
export const fetchSite: Guard<AdminRequest> = ({ req }) => {
  const site = req.headers['sec-fetch-site'];
  return site === 'cross-site' || site === 'same-site'
    ? new HttpError('forbidden', `${site} request refused: the admin API answers only the console's own pages`)
    : null;
};
