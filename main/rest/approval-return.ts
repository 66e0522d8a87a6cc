import type { IncomingMessage, ServerResponse } from 'node:http';
import { CONSOLE_PATH } from '../contract/health.ts';
import { ApprovalLinkId } from '../contract/approval-link.ts';
import { parseCookies } from '../lib/http/cookies.ts';
import { SIGN_IN_TO_APPROVE_PAGE } from './login-page.ts';

/** Remembers, for the next login in this browser, which approval link's page to return to. */
export const NEXT_COOKIE = 'gatehouse_next';
/** As long as a login link lives: the person gets one and opens it. */
const NEXT_MAX_AGE_S = 600;

/**
 * A browser without a session, sent here by an approval link's page: remember
 * the link (only an approval link id is kept, so the login cannot be made to
 * redirect anywhere else) and say how to sign in. Only the console's own page
 * may set it: a navigation from another site (`Sec-Fetch-Site` other than
 * same-origin, or none) gets the same page and no cookie, so no web page can
 * choose which write the person's next login lands on.
 */
export function askToSignIn(req: IncomingMessage, res: ServerResponse, next: string): void {
  const fromConsole = req.headers['sec-fetch-site'] === 'same-origin';
  const ok = fromConsole && ApprovalLinkId.safeParse(next).success;
  res.writeHead(SIGN_IN_TO_APPROVE_PAGE.status, {
    ...SIGN_IN_TO_APPROVE_PAGE.headers,
    // Lax: the login link is often opened from a terminal or another app (a navigation from outside the site)
    ...(ok
      ? {
          'Set-Cookie': `${NEXT_COOKIE}=${next}; Path=${CONSOLE_PATH}login; HttpOnly; SameSite=Lax; Max-Age=${NEXT_MAX_AGE_S}`,
        }
      : {}),
  });
  res.end(SIGN_IN_TO_APPROVE_PAGE.body);
}

/** The approval link a login returns to, when one was remembered and is still well-formed. */
export function returnTo(req: IncomingMessage): string | null {
  const next = parseCookies(req.headers.cookie)[NEXT_COOKIE];
  return next && ApprovalLinkId.safeParse(next).success ? next : null;
}
