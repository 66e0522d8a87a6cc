import { HttpError } from '../../../main/lib/http/http-error.ts';
import type { Guard } from '../../../main/lib/http/compose.ts';
import type { Router } from '../../../main/lib/http/router.ts';
import { requestTarget } from '../../../main/lib/http/url.ts';
import type { CloudRequest, Entry } from '../cloud-request.ts';

/** The route, or 404 (with where the endpoints are listed) / 405 with Allow. */
export function matchRoute(router: Router<Entry>): Guard<CloudRequest> {
  return (c) => {
    const { path, query } = requestTarget(c.req);
    c.path = path;
    c.query = query;
    const method = c.req.method ?? 'GET';
    const match = router.match(method, path);
    if (!match)
      return new HttpError('not_found', `no endpoint ${method} ${path.slice(0, 200)}: see docs/cloud-gateway.md`);
    if (!match.handler)
      return new HttpError('invalid_request', `${method} is not allowed here: use ${match.allow.join(', ')}`, {
        status: 405,
        headers: { Allow: match.allow.join(', ') },
      });
    c.entry = match.handler;
    c.params = match.params;
    return null;
  };
}
