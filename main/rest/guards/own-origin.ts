import type { Guard } from '../../lib/http/compose.ts';
import { HttpError } from '../../lib/http/http-error.ts';
import type { AdminRequest } from './admin-request.ts';

/** A browser request (one with Origin) must come from the console's own origin; a request without Origin is a non-browser client. */
export function ownOrigin(origin: () => string): Guard<AdminRequest> {
  return ({ req }) => {
    const o = req.headers.origin;
    return o !== undefined && o !== origin()
      ? new HttpError('forbidden', "the admin API answers only the console's own origin")
      : null;
  };
}
