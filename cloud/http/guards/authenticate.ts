import type { Guard } from '../../../main/lib/http/compose.ts';
import { authenticateAccount } from '../../services/account-auth.ts';
import { Authenticator } from '../../services/auth-service.ts';
import type { Ctx } from '../../services/context.ts';
import { loadGrants, supportOf } from '../../services/grants-service.ts';
import { identify, type CloudRequest } from '../cloud-request.ts';

/**
 * The caller of a signed route (a signature over the raw bytes) or of an
 * account route (the account's API key); its plan and support priority go on
 * the answer. Unsigned and download-token routes pass (a token route names
 * its site itself).
 */
export function authenticate(ctx: Ctx): Guard<CloudRequest> {
  const auth = new Authenticator(ctx);
  return async (c) => {
    const { req } = c;
    if (c.entry!.auth === 'site') {
      c.site = await auth.verify({
        method: req.method ?? 'GET',
        authority: String(req.headers.host ?? ''),
        url: req.url ?? '/',
        headers: req.headers,
        body: c.raw,
      });
      identify(c, supportOf(await loadGrants(ctx.db, c.site, ctx.now())));
    } else if (c.entry!.auth === 'account') {
      c.account = await authenticateAccount(ctx, req.headers);
      identify(c, c.account.account);
    }
  };
}
