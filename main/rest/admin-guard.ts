import type { IncomingMessage } from 'node:http';
import type { Principal } from '../contract/principal.ts';
import { ANSWERED, compose } from '../lib/http/compose.ts';
import type { AdminRequest } from './guards/admin-request.ts';
import { authenticate, type AuthenticateDeps } from './guards/authenticate.ts';
import { csrf } from './guards/csrf.ts';
import { fetchSite } from './guards/fetch-site.ts';
import { ownOrigin } from './guards/own-origin.ts';

export { ADMIN_AUTH_FAILURES_PER_MINUTE } from './guards/authenticate.ts';

export interface AdmitDeps extends AuthenticateDeps {
  /** the service's own origin, e.g. http://127.0.0.1:7823 */
  origin: () => string;
}

/**
 * The one gate in front of the admin API and the local pro REST, as a guard
 * list (main/rest/guards/, one concern each): the console's own origin,
 * Fetch Metadata, the caller's credential, CSRF for session writes. Answers
 * the caller's principal, or throws the first refusal.
 */
export function createAdmit(deps: AdmitDeps): (req: IncomingMessage) => Promise<Principal> {
  const guards = compose<AdminRequest>(ownOrigin(deps.origin), fetchSite, authenticate(deps), csrf);
  return async (req) => {
    const c: AdminRequest = { req, who: null };
    const refused = await guards(c);
    if (refused && refused !== ANSWERED) throw refused;
    return c.who!;
  };
}
