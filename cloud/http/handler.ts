import type { IncomingMessage, ServerResponse } from 'node:http';
import { CLOUD_BASE_PATH, CLOUD_ENDPOINTS, CLOUD_MAX_BODY_BYTES, type CloudEndpoint } from '../../main/contract/cloud/index.ts';
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
import { RateLimiter } from '../../main/core/rate-limiter.ts';
import { VERSION } from '../../main/version.ts';
import { CloudError } from '../errors.ts';
import type { SiteRow } from '../repo/sites-repo.ts';
import { Authenticator } from '../services/auth-service.ts';
import type { Ctx } from '../services/context.ts';
import { ROUTES, type RouteHandler } from './routes.ts';
import { toHttpError, withRetryRule } from './to-http-error.ts';

/** Requests per minute; 0 switches a limit off. */
export interface RateLimits {
  /** every request, per client address */
  perAddress: number;
  /** sites/register, per client address */
  register: number;
  /** signed requests, per site */
  perSite: number;
}

export const DEFAULT_RATE_LIMITS: RateLimits = { perAddress: 1200, register: 10, perSite: 600 };

export interface HandlerOptions {
  rateLimits?: Partial<RateLimits>;
  /** take the client address from Forwarded / X-Forwarded-For (behind a load balancer) */
  trustProxy?: boolean;
}

type Entry = { name: CloudEndpoint; signed: boolean; handler: RouteHandler | null };

/**
 * The gateway's HTTP pipeline, on the shared edge (main/lib/http): request id,
 * route, per-address rate limit, bounded body, signature on the raw bytes,
 * per-site rate limit, JSON with a nesting limit, the route, one access-log
 * line. Every answer is the DESIGN.md envelope and carries X-Request-Id.
 */
export function createCloudHandler(ctx: Ctx, opts: HandlerOptions = {}) {
  const limits = { ...DEFAULT_RATE_LIMITS, ...opts.rateLimits };
  const router = new Router<Entry>();
  for (const [name, e] of Object.entries(CLOUD_ENDPOINTS) as Array<[CloudEndpoint, (typeof CLOUD_ENDPOINTS)[CloudEndpoint]]>) {
    router.on(e.method, `${CLOUD_BASE_PATH}/${e.path}`, { name, signed: e.signed, handler: name === 'health' || name === 'keys' ? null : ROUTES[name] });
  }
  const auth = new Authenticator(ctx);
  const byAddress = new RateLimiter();
  const byRegister = new RateLimiter();
  const bySite = new RateLimiter();
  const budget = new BodyBudget(16 * 1024 * 1024, 64 * 1024);

  const handle = async (req: IncomingMessage, res: ServerResponse): Promise<void> => {
    const started = performance.now();
    const id = requestId(req, res);
    let site: SiteRow | null = null;
    let status = 500;
    try {
      const { path, query } = requestTarget(req);
      const match = router.match(req.method ?? 'GET', path);
      if (!match) throw new HttpError('not_found', `no endpoint ${req.method} ${path.slice(0, 200)}: see docs/cloud-gateway.md`);
      if (!match.handler) throw new HttpError('invalid_request', `${req.method} is not allowed here: use ${match.allow.join(', ')}`, { status: 405, headers: { Allow: match.allow.join(', ') } });
      const entry = match.handler;
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
      const raw = await readBody(req, { limit: CLOUD_MAX_BODY_BYTES, budget });
      if (entry.signed) {
        site = await auth.verify({ method: req.method ?? 'GET', authority: String(req.headers.host ?? ''), url: req.url ?? '/', headers: req.headers, body: raw });
        const r = checkRate(res, bySite, site.id, limits.perSite, now);
        if (r) throw r;
      }
      const body = raw.length === 0 ? {} : parseJson(raw);
      const answer = await entry.handler!({ ctx, site: site!, body, raw, query, headers: req.headers });
      status = answer.status ?? 200;
      sendJson(res, status, answer.body, answer.headers);
    } catch (e) {
      const err = e instanceof CloudError ? toHttpError(e) : e instanceof HttpError ? withRetryRule(e) : null;
      if (!err) throw e;
      status = err.status;
      sendError(res, err, cloudEnvelope, { requestId: id });
    } finally {
      const fields = { request_id: id, method: req.method, path: (req.url ?? '').split('?')[0]!.slice(0, 200), status, ms: Math.round((performance.now() - started) * 10) / 10, ...(site ? { site_id: site.id } : {}) };
      if (status >= 500) ctx.log.error('request', fields);
      else if (status >= 400) ctx.log.info('request refused', fields);
      else ctx.log.debug('request', fields);
    }
  };
  return errorBoundary(handle, { envelope: cloudEnvelope, log: ctx.log, meta: answerMeta });
}
