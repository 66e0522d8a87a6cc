import type { IncomingMessage, ServerResponse } from 'node:http';
import { ADMIN_PREFIX, CONSOLE_PATH, MCP_PATH, REST_PREFIX } from '../contract/health.ts';
import type { Logger } from '../lib/logger.ts';
import { HttpError } from '../lib/http/http-error.ts';
import { adminEnvelope } from '../lib/http/envelope.ts';
import { answerMeta, errorBoundary } from '../lib/http/compose.ts';
import { Router, type Params } from '../lib/http/router.ts';
import { decodePathPart, requestTarget } from '../lib/http/url.ts';
import { checkHost } from '../lib/http/host.ts';
import { requestId } from '../lib/http/request-id.ts';
import { sendJson } from '../lib/http/send.ts';
import type { AdminAuth } from './admin-auth.ts';
import { SESSION_COOKIE, SESSION_MAX_AGE_S } from './admin-auth.ts';
import { serveConsole } from './console-static.ts';
import { USED_LINK_PAGE } from './login-page.ts';
import { isUpstreamMcpSidePath } from '../contract/remote-upstreams.ts';
import { APPROVAL_ROUTE } from '../contract/approval-link.ts';
import { NEXT_COOKIE, askToSignIn, returnTo } from './approval-return.ts';

/** A handler for everything under a prefix: the rest of the path (still percent-encoded) and the query. */
export type SubRoutes = (
  req: IncomingMessage,
  res: ServerResponse,
  subpath: string,
  query: URLSearchParams,
) => Promise<void> | void;

export interface RouterDeps {
  mcp: (req: IncomingMessage, res: ServerResponse) => Promise<void>;
  admin: SubRoutes;
  pro: SubRoutes;
  auth: AdminAuth;
  consoleDir: string;
  allowedHosts: ReadonlySet<string>;
  info: () => unknown;
  log: Logger;
}

type Handler = (
  req: IncomingMessage,
  res: ServerResponse,
  params: Params,
  query: URLSearchParams,
) => Promise<void> | void;

/**
 * The one HTTP entry: the MCP endpoint (which runs its own guards and answers
 * in JSON-RPC), then, behind the Host check, the admin API and local REST
 * (each with its own route table), the console and `GET /`. Every refusal
 * here is `{ok:false, code, message}`; a bug is a logged 500.
 */
export function createRouter(deps: RouterDeps) {
  const routes = new Router<Handler>()
    .get('/', (_req, res) => sendJson(res, 200, deps.info()))
    .on('*', `${ADMIN_PREFIX}/*`, (req, res, p, query) => deps.admin(req, res, p['*']!, query))
    .on('*', `${REST_PREFIX}/pro/*`, (req, res, p, query) => deps.pro(req, res, `pro/${p['*']!}`, query))
    .get(`${CONSOLE_PATH}login`, (req, res, _p, query) => login(req, res, query, deps.auth))
    .on('*', CONSOLE_PATH.replace(/\/$/, ''), (_req, res) => {
      res.writeHead(302, { Location: CONSOLE_PATH });
      res.end();
    })
    .get(`${CONSOLE_PATH}*`, (_req, res, p) => serveConsole(res, deps.consoleDir, decodePathPart(p['*']!)));

  return errorBoundary(
    async (req, res) => {
      const { path, query } = requestTarget(req);
      if (path === MCP_PATH || isUpstreamMcpSidePath(path)) return deps.mcp(req, res);
      requestId(req, res);
      const badHost = checkHost(req, deps.allowedHosts);
      if (badHost) throw badHost;
      const match = routes.match(req.method ?? 'GET', path);
      if (!match?.handler)
        throw new HttpError('not_found', `nothing at ${path.slice(0, 200)}: the MCP endpoint is ${MCP_PATH}`);
      await match.handler(req, res, match.params, query);
    },
    { envelope: adminEnvelope, log: deps.log, meta: answerMeta },
  );
}

/**
 * The one-time link: spends the code, sets an HttpOnly SameSite=Strict session
 * cookie. Without a code but with `next` (an approval link's id, sent by its
 * page to a browser without a session), it remembers where to come back to
 * and says how to sign in; the login that follows returns there.
 */
function login(req: IncomingMessage, res: ServerResponse, query: URLSearchParams, auth: AdminAuth): void {
  const code = query.get('code');
  if (code === null && query.has('next')) return askToSignIn(req, res, query.get('next')!);
  const sid = auth.redeem(code ?? '');
  if (!sid) {
    res.writeHead(USED_LINK_PAGE.status, USED_LINK_PAGE.headers);
    return void res.end(USED_LINK_PAGE.body);
  }
  const next = returnTo(req);
  res.writeHead(302, {
    'Set-Cookie': [
      `${SESSION_COOKIE}=${sid}; Path=/; HttpOnly; SameSite=Strict; Max-Age=${SESSION_MAX_AGE_S}`,
      ...(next ? [`${NEXT_COOKIE}=; Path=${CONSOLE_PATH}login; HttpOnly; SameSite=Lax; Max-Age=0`] : []),
    ],
    Location: next ? `${CONSOLE_PATH}#${APPROVAL_ROUTE}/${next}` : CONSOLE_PATH,
    'Cache-Control': 'no-store',
    'Referrer-Policy': 'no-referrer',
  });
  res.end();
}
