import type { IncomingMessage, ServerResponse } from 'node:http';
import { ADMIN_PREFIX, CONSOLE_PATH, MCP_PATH, REST_PREFIX } from '../contract/health.ts';
import type { Logger } from '../core/ports.ts';
import { checkHost } from '../mcp/guards/host.ts';
import type { AdminAuth } from './admin-auth.ts';
import { SESSION_COOKIE } from './admin-auth.ts';
import { serveConsole } from './console-static.ts';
import { USED_LINK_PAGE } from './login-page.ts';
import { sendError, sendJson } from './http-util.ts';

type Sub = (req: IncomingMessage, res: ServerResponse, subpath: string, url: URL) => Promise<void>;

export interface RouterDeps {
  mcp: (req: IncomingMessage, res: ServerResponse) => Promise<void>;
  admin: Sub;
  pro: Sub;
  auth: AdminAuth;
  consoleDir: string;
  allowedHosts: ReadonlySet<string>;
  info: () => unknown;
  log: Logger;
}

/** The one HTTP entry: MCP endpoint, admin + local REST, the console, and `GET /`. */
export function createRouter(deps: RouterDeps) {
  return async function route(req: IncomingMessage, res: ServerResponse): Promise<void> {
    try {
      const url = new URL(req.url ?? '/', 'http://gatehouse.invalid');
      const path = url.pathname;
      if (path === MCP_PATH) return await deps.mcp(req, res);
      const badHost = checkHost(req, deps.allowedHosts);
      if (badHost) return sendError(res, 'forbidden', badHost.message);
      if (path === '/' && req.method === 'GET') return sendJson(res, 200, deps.info());
      if (path.startsWith(`${ADMIN_PREFIX}/`)) return await deps.admin(req, res, path.slice(ADMIN_PREFIX.length + 1), url);
      if (path.startsWith(`${REST_PREFIX}/pro/`)) return await deps.pro(req, res, path.slice(REST_PREFIX.length + 1), url);
      if (path === `${CONSOLE_PATH}login` && req.method === 'GET') return login(req, res, url, deps.auth);
      if (path === '/console') {
        res.writeHead(302, { Location: CONSOLE_PATH });
        return void res.end();
      }
      if (path.startsWith(CONSOLE_PATH) && req.method === 'GET') return await serveConsole(res, deps.consoleDir, decodeURIComponent(path.slice(CONSOLE_PATH.length)));
      return sendError(res, 'not_found', `nothing at ${path}: the MCP endpoint is ${MCP_PATH}`);
    } catch (e) {
      deps.log.error('request failed', { error: (e as Error).message, url: req.url });
      if (!res.headersSent) sendError(res, 'internal_error', 'internal error: see the service log');
      else res.destroy();
    }
  };
}

/** The one-time link: spends the code, sets an HttpOnly SameSite=Strict session cookie. */
function login(req: IncomingMessage, res: ServerResponse, url: URL, auth: AdminAuth): void {
  const sid = auth.redeem(url.searchParams.get('code') ?? '');
  if (!sid) {
    res.writeHead(USED_LINK_PAGE.status, USED_LINK_PAGE.headers);
    return void res.end(USED_LINK_PAGE.body);
  }
  res.writeHead(302, {
    'Set-Cookie': `${SESSION_COOKIE}=${sid}; Path=/; HttpOnly; SameSite=Strict; Max-Age=${12 * 3600}`,
    Location: CONSOLE_PATH,
    'Cache-Control': 'no-store',
    'Referrer-Policy': 'no-referrer',
  });
  res.end();
}
