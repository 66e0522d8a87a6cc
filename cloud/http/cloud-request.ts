import type { IncomingMessage, ServerResponse } from 'node:http';
import { HEADER_PLAN, HEADER_SUPPORT_PRIORITY } from '../../main/contract/cloud/index.ts';
import { requestId } from '../../main/lib/http/request-id.ts';
import type { SiteRow } from '../repo/sites-repo.ts';
import type { AccountPrincipal } from '../services/account-auth.ts';
import type { RouteHandler } from './routes.ts';

/** How a route's caller is known: not at all, a site signature, the account's API key, or a download token in the path. */
export type Auth = 'none' | 'site' | 'account' | 'token';

/** One route: its name, template (what logs and metrics name it by), caller, body bound and handler. */
export interface Entry {
  name: string;
  template: string;
  auth: Auth;
  maxBody: number;
  handler: RouteHandler;
  /** the route gets a signal that aborts when the caller goes away (a long AI generation) */
  watchClose: boolean;
}

/**
 * One request on its way through the guards and its route: what each guard
 * found out (the route, the body, the caller), and how it ended (for the one
 * access-log line).
 */
export interface CloudRequest {
  req: IncomingMessage;
  res: ServerResponse;
  id: string;
  started: number;
  path: string;
  query: URLSearchParams;
  entry: Entry | null;
  params: Record<string, string>;
  raw: Buffer;
  body: unknown;
  site: SiteRow | null;
  account: AccountPrincipal | null;
  /** the error code answered, the bug's message for the log, a status the answer does not show (499: the caller left) */
  code: string | null;
  failure: string | null;
  statusOverride: number | null;
}

export function newRequest(req: IncomingMessage, res: ServerResponse): CloudRequest {
  return {
    req,
    res,
    id: requestId(req, res),
    started: performance.now(),
    path: '',
    query: new URLSearchParams(),
    entry: null,
    params: {},
    raw: Buffer.alloc(0),
    body: {},
    site: null,
    account: null,
    code: null,
    failure: null,
    statusOverride: null,
  };
}

/** The plan and support priority headers, for answers to a known site or account. */
export function identify(c: CloudRequest, s: { plan: string | null; support_priority: string | null }): void {
  if (s.plan) c.res.setHeader(HEADER_PLAN, s.plan);
  if (s.support_priority) c.res.setHeader(HEADER_SUPPORT_PRIORITY, s.support_priority);
}
