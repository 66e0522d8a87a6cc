import type { IncomingMessage, ServerResponse } from 'node:http';
import { pipeline } from 'node:stream/promises';
import {
  ACCOUNT_ENDPOINTS,
  AI_MAX_BODY_BYTES,
  CLOUD_BASE_PATH,
  CLOUD_ENDPOINTS,
  CLOUD_MAX_BODY_BYTES,
  CLOUD_PART2_ENDPOINTS,
  HEADER_PLAN,
  HEADER_SUPPORT_PRIORITY,
} from '../../main/contract/cloud/index.ts';
import { BodyBudget, readBody } from '../../main/lib/http/body.ts';
import { clientAddress } from '../../main/lib/http/client-address.ts';
import { answerMeta, errorBoundary } from '../../main/lib/http/compose.ts';
import { cloudEnvelope } from '../../main/lib/http/envelope.ts';
import { HttpError } from '../../main/lib/http/http-error.ts';
import { parseJson } from '../../main/lib/http/json.ts';
import { checkRate } from '../../main/lib/http/rate-limit.ts';
import { requestId } from '../../main/lib/http/request-id.ts';
import { Router } from '../../main/lib/http/router.ts';
import { sendError, sendJson } from '../../main/lib/http/send.ts';
import { requestTarget } from '../../main/lib/http/url.ts';
import { RateLimiter } from '../../main/lib/rate-limiter.ts';
import { VERSION } from '../../main/version.ts';
import { CloudError } from '../errors.ts';
import type { SiteRow } from '../repo/sites-repo.ts';
import { authenticateAccount, type AccountPrincipal } from '../services/account-auth.ts';
import { ClientGone } from '../services/ai-service.ts';
import { Authenticator } from '../services/auth-service.ts';
import type { Ctx } from '../services/context.ts';
import { loadGrants, supportOf } from '../services/grants-service.ts';
import { ACCOUNT_ROUTES } from './routes-account.ts';
import { PART2_ROUTES } from './routes-part2.ts';
import { ROUTES, type RouteAnswer, type RouteHandler } from './routes.ts';
import { toHttpError, withRetryRule } from './to-http-error.ts';

/** Requests per minute; 0 switches a limit off. */
export interface RateLimits {
  /** every request, per client address */
  perAddress: number;
  /** sites/register, per client address */
  register: number;
  /** signed requests, per site; account requests, per account */
  perSite: number;
}

export const DEFAULT_RATE_LIMITS: RateLimits = { perAddress: 1200, register: 10, perSite: 600 };

export interface HandlerOptions {
  rateLimits?: Partial<RateLimits>;
  /** take the client address from X-Forwarded-For (behind a load balancer) */
  trustProxy?: boolean;
  /** the gateway's public base URL (scheme and authority) for the URLs it hands out; default: from the request */
  publicUrl?: string;
}

/** How a route's caller is known: not at all, a site signature, the account's API key, or a download token in the path. */
type Auth = 'none' | 'site' | 'account' | 'token';
/** `watchClose`: the route gets a signal that aborts when the caller goes away (a long AI generation). */
type Entry = { name: string; template: string; auth: Auth; maxBody: number; handler: RouteHandler | null; watchClose: boolean };
const NEVER = new AbortController().signal;

function closeSignal(res: ServerResponse): AbortSignal {
  const gone = new AbortController();
  res.once('close', () => {
    if (!res.writableFinished) gone.abort();
  });
  return gone.signal;
}

function routeTable(): Router<Entry> {
  const router = new Router<Entry>();
  const add = (name: string, e: { method: string; path: string }, auth: Auth, handler: RouteHandler | null, maxBody = CLOUD_MAX_BODY_BYTES) =>
    router.on(e.method, `${CLOUD_BASE_PATH}/${e.path}`, { name, template: e.path, auth, maxBody, handler, watchClose: name === 'aiGenerate' });
  for (const [name, e] of Object.entries(CLOUD_ENDPOINTS)) add(name, e, e.signed ? 'site' : 'none', name === 'health' || name === 'keys' ? null : ROUTES[name as keyof typeof ROUTES]);
  for (const [name, e] of Object.entries(CLOUD_PART2_ENDPOINTS)) {
    const big = name === 'aiGenerate' || name === 'aiRoute';
    add(name, e, e.signed ? 'site' : 'token', PART2_ROUTES[name as keyof typeof PART2_ROUTES], big ? AI_MAX_BODY_BYTES : CLOUD_MAX_BODY_BYTES);
  }
  for (const [name, e] of Object.entries(ACCOUNT_ENDPOINTS)) add(name, e, 'account', ACCOUNT_ROUTES[name as keyof typeof ACCOUNT_ROUTES]);
  return router;
}

function originOf(req: IncomingMessage, trustProxy: boolean): string {
  const forwarded = trustProxy ? String(req.headers['x-forwarded-proto'] ?? '').split(',')[0]!.trim() : '';
  const scheme = forwarded === 'https' || (req.socket as { encrypted?: boolean }).encrypted ? 'https' : 'http';
  return `${scheme}://${String(req.headers.host ?? 'localhost').toLowerCase()}`;
}

/**
 * The gateway's HTTP pipeline, on the shared edge (main/lib/http): request id,
 * route, per-address rate limit, bounded body, the caller (a signature on the
 * raw bytes, the account's API key, or a download token), per-caller rate
 * limit, JSON with a nesting limit, the route, one access-log line and one
 * request-log entry. Every answer carries X-Request-Id, and those to a known
 * site or account its plan and support priority.
 */
export function createCloudHandler(ctx: Ctx, opts: HandlerOptions = {}) {
  const limits = { ...DEFAULT_RATE_LIMITS, ...opts.rateLimits };
  const router = routeTable();
  const auth = new Authenticator(ctx);
  const byAddress = new RateLimiter();
  const byRegister = new RateLimiter();
  const bySite = new RateLimiter();
  const budget = new BodyBudget(16 * 1024 * 1024, 64 * 1024);

  const handle = async (req: IncomingMessage, res: ServerResponse): Promise<void> => {
    const started = performance.now();
    const id = requestId(req, res);
    let site: SiteRow | null = null;
    let account: AccountPrincipal | null = null;
    let entry: Entry | null = null;
    let status = 500;
    let code: string | null = null;
    let failure: string | undefined;
    const identify = (s: { plan: string | null; support_priority: string | null }) => {
      if (s.plan) res.setHeader(HEADER_PLAN, s.plan);
      if (s.support_priority) res.setHeader(HEADER_SUPPORT_PRIORITY, s.support_priority);
    };
    try {
      const { path, query } = requestTarget(req);
      const match = router.match(req.method ?? 'GET', path);
      if (!match) throw new HttpError('not_found', `no endpoint ${req.method} ${path.slice(0, 200)}: see docs/cloud-gateway.md`);
      if (!match.handler) throw new HttpError('invalid_request', `${req.method} is not allowed here: use ${match.allow.join(', ')}`, { status: 405, headers: { Allow: match.allow.join(', ') } });
      entry = match.handler;
      const address = clientAddress(req, !!opts.trustProxy);
      const now = ctx.now().getTime();
      const refused = checkRate(res, byAddress, address, limits.perAddress, now) ?? (entry.name === 'register' ? checkRate(res, byRegister, address, limits.register, now) : null);
      if (refused) throw refused;
      if (entry.name === 'health') {
        // A load balancer's probe: answer 503 when this instance cannot reach its database.
        const reachable = await ctx.db.query('SELECT 1').then(() => true, () => false);
        if (!reachable) throw new HttpError('gateway_unavailable', 'this instance cannot reach its database', { status: 503, headers: { 'Retry-After': '5' } });
        status = 200;
        return sendJson(res, 200, { success: true, status: 'ok', version: VERSION, database: ctx.db.kind, server_time: ctx.now().toISOString() });
      }
      if (entry.name === 'keys') return void (status = 200, sendJson(res, 200, await ctx.keys.jwks(ctx.now())));
      const raw = await readBody(req, { limit: entry.maxBody, budget });
      if (entry.auth === 'site') {
        site = await auth.verify({ method: req.method ?? 'GET', authority: String(req.headers.host ?? ''), url: req.url ?? '/', headers: req.headers, body: raw });
        identify(supportOf(await loadGrants(ctx.db, site, ctx.now())));
        const r = checkRate(res, bySite, site.id, limits.perSite, now);
        if (r) throw r;
      } else if (entry.auth === 'account') {
        account = await authenticateAccount(ctx, req.headers);
        identify(account.account);
        const r = checkRate(res, bySite, account.account.id, limits.perSite, now);
        if (r) throw r;
      }
      // A download token is a site's credential too: what it fetches counts against that site's limit.
      const admitSite = (s: SiteRow) => {
        site = s;
        const r = checkRate(res, bySite, s.id, limits.perSite, now);
        if (r) throw r;
      };
      const body = raw.length === 0 ? {} : parseJson(raw);
      const answer = await entry.handler!({ ctx, site: site!, account: account!, body, raw, query, headers: req.headers, params: match.params, origin: opts.publicUrl ?? originOf(req, !!opts.trustProxy), requestId: id, signal: entry.watchClose ? closeSignal(res) : NEVER, admitSite });
      if (answer.site) site = answer.site;
      if (answer.support) identify(answer.support);
      status = answer.status ?? 200;
      await send(res, status, answer);
    } catch (e) {
      if (e instanceof ClientGone) return void (status = 499);
      let err = e instanceof CloudError ? toHttpError(e) : e instanceof HttpError ? withRetryRule(e) : null;
      if (!err) {
        // A bug in us: logged below with the route's template, never the raw path (a download path carries its token).
        failure = e instanceof Error ? e.message : String(e);
        err = withRetryRule(new HttpError('internal_error', 'internal error: see the service log'));
      }
      status = err.status;
      code = err.code;
      sendError(res, err, cloudEnvelope, { requestId: id });
    } finally {
      const ms = Math.round((performance.now() - started) * 10) / 10;
      const fields = { request_id: id, method: req.method, path: entry ? entry.template : loggablePath(req.url ?? ''), status, ms, ...(site ? { site_id: site.id } : {}), ...(account ? { account_id: account.account.id } : {}), ...(failure ? { error: failure } : {}) };
      if (status >= 500) ctx.log.error('request', fields);
      else if (status >= 400) ctx.log.info('request refused', fields);
      else ctx.log.debug('request', fields);
      ctx.requestLog.record({
        at: new Date(ctx.now().getTime()).toISOString(),
        request_id: id,
        account_id: account?.account.id ?? site?.account_id ?? null,
        site_id: site?.id ?? null,
        auth: entry?.auth ?? 'none',
        endpoint: entry?.template ?? '-',
        method: String(req.method ?? '').slice(0, 10),
        status,
        code,
        ms,
      });
    }
  };
  return errorBoundary(handle, { envelope: cloudEnvelope, log: ctx.log, meta: answerMeta });
}

/** A path that matched no route, fit for the log: no query, and no download token (a bearer credential) even in a malformed download path. */
export function loggablePath(url: string): string {
  return url.split('?')[0]!.replace(/(\/updates\/files\/)[^/]*/, '$1:token').slice(0, 200);
}

async function send(res: ServerResponse, status: number, a: RouteAnswer): Promise<void> {
  if (!a.raw) return sendJson(res, status, a.body, a.headers);
  const base = { 'Content-Type': a.raw.contentType, 'Cache-Control': 'no-store', 'X-Content-Type-Options': 'nosniff', ...a.headers };
  if (a.raw.file) {
    res.writeHead(status, { ...base, 'Content-Length': String(a.raw.file.size), 'Content-Disposition': `attachment; filename="${a.raw.file.name}"` });
    // A client that goes away mid-download ends the pipeline; nothing to answer then.
    await pipeline(a.raw.file.stream(), res).catch(() => res.destroy());
    return;
  }
  const text = a.raw.text ?? '';
  res.writeHead(status, { ...base, 'Content-Length': String(Buffer.byteLength(text)) });
  res.end(text);
}
