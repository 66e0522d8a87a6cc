import type { IncomingMessage, ServerResponse } from 'node:http';
import { ANSWERED, answerMeta, compose, errorBoundary } from '../../main/lib/http/compose.ts';
import { cloudEnvelope } from '../../main/lib/http/envelope.ts';
import { HttpError } from '../../main/lib/http/http-error.ts';
import { RateLimiter } from '../../main/lib/rate-limiter.ts';
import { DatabaseUnavailable } from '../db/db-unavailable.ts';
import { CloudError } from '../errors.ts';
import { recordQuotaRefusal } from '../metrics.ts';
import type { SiteRow } from '../repo/sites-repo.ts';
import { ClientGone } from '../services/ai-service.ts';
import { claimDeferredNonce } from '../services/auth-service.ts';
import type { Ctx } from '../services/context.ts';
import { logRequest } from './access-log.ts';
import { identify, newRequest, type CloudRequest } from './cloud-request.ts';
import { addressRate } from './guards/address-rate.ts';
import { authenticate } from './guards/authenticate.ts';
import { callerRate } from './guards/caller-rate.ts';
import { matchRoute } from './guards/match-route.ts';
import { metricsAccess } from './guards/metrics-access.ts';
import { parseBody } from './guards/parse-body.ts';
import { readRequestBody } from './guards/read-body.ts';
import { routeTable } from './route-table.ts';
import { sendAnswer } from './send-answer.ts';
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
  /** a Bearer token that reads /metrics; without one, only requests made on this host do */
  metricsToken?: string;
  /** true once the service is stopping: /health/ready answers 503 so a balancer drains this instance */
  stopping?: () => boolean;
}

const NEVER = new AbortController().signal;

function closeSignal(res: ServerResponse): AbortSignal {
  const gone = new AbortController();
  res.once('close', () => {
    if (!res.writableFinished) gone.abort();
  });
  return gone.signal;
}

function originOf(req: IncomingMessage, trustProxy: boolean): string {
  const forwarded = trustProxy
    ? String(req.headers['x-forwarded-proto'] ?? '')
        .split(',')[0]!
        .trim()
    : '';
  const scheme = forwarded === 'https' || (req.socket as { encrypted?: boolean }).encrypted ? 'https' : 'http';
  return `${scheme}://${String(req.headers.host ?? 'localhost').toLowerCase()}`;
}

/**
 * The gateway's HTTP pipeline on the shared edge (main/lib/http): guards on
 * compose() (route, per-address rate limit, who may read the metrics, bounded
 * body, the caller, per-caller rate limit, JSON with a nesting limit), then
 * the route; errors are answered by the one error boundary (service refusals
 * in the contract's shape, a lost database as 503 gateway_unavailable, a bug
 * as 500 without details) and every request is written down once, by
 * logRequest. Every answer carries X-Request-Id, and those to a known site or
 * account its plan and support priority.
 */
export function createCloudHandler(ctx: Ctx, opts: HandlerOptions = {}) {
  const limits = { ...DEFAULT_RATE_LIMITS, ...opts.rateLimits };
  const now = () => ctx.now().getTime();
  const router = routeTable(opts.stopping ?? (() => false), opts.publicUrl);
  const bySite = new RateLimiter();
  const admit = compose<CloudRequest>(
    matchRoute(router),
    addressRate(limits, !!opts.trustProxy, now),
    metricsAccess(opts.metricsToken, !!opts.trustProxy),
    readRequestBody(),
    authenticate(ctx),
    callerRate(bySite, limits.perSite, now),
    parseBody,
  );

  const serve = async (c: CloudRequest): Promise<void> => {
    try {
      await route(c);
    } finally {
      // A request refused after authentication but before its route's own statement claimed the nonce (a guard,
      // a bad body or event): spent here, so the signed request can never be replayed to act later.
      if (c.site) await claimDeferredNonce(ctx, c.site);
    }
  };

  const route = async (c: CloudRequest): Promise<void> => {
    const refused = await admit(c);
    if (refused === ANSWERED) return;
    if (refused) throw refused;
    const entry = c.entry!;
    // A download token is a site's credential too: what it fetches counts against that site's limit.
    const admitSite = (s: SiteRow) => {
      c.site = s;
      const r = callerRate(bySite, limits.perSite, now)(c);
      if (r) throw r;
    };
    const { req, res } = c;
    const answer = await entry.handler({
      ctx,
      site: c.site!,
      account: c.account!,
      body: c.body,
      raw: c.raw,
      query: c.query,
      headers: req.headers,
      params: c.params,
      origin: opts.publicUrl ?? originOf(req, !!opts.trustProxy),
      requestId: c.id,
      signal: entry.watchClose ? closeSignal(res) : NEVER,
      admitSite,
    });
    if (answer.site) c.site = answer.site;
    if (answer.support) identify(c, answer.support);
    await sendAnswer(res, answer.status ?? 200, answer);
  };

  return async (req: IncomingMessage, res: ServerResponse): Promise<void> => {
    const c = newRequest(req, res);
    await errorBoundary(() => serve(c), {
      envelope: cloudEnvelope,
      log: ctx.log,
      meta: answerMeta,
      translate: (e) => translate(c, e),
    })(req, res);
    logRequest(ctx, c);
  };
}

/** Any error as the refusal to answer; the code and a bug's message are kept for the log line. */
function translate(c: CloudRequest, e: unknown): HttpError | typeof ANSWERED {
  if (e instanceof ClientGone) {
    c.statusOverride = 499;
    return ANSWERED;
  }
  let err: HttpError;
  if (e instanceof CloudError) err = toHttpError(e);
  else if (e instanceof HttpError) err = withRetryRule(e);
  else {
    // A bug in us: logged with the route's template, never the raw path (a download path carries its token).
    c.failure = e instanceof Error ? e.message : String(e);
    err = withRetryRule(new HttpError('internal_error', 'internal error: see the service log'));
  }
  if (e instanceof DatabaseUnavailable) c.failure = e.reason;
  if (e instanceof CloudError && e.code === 'quota_exceeded') recordQuotaRefusal(String(e.details.metric ?? 'unknown'));
  c.code = err.code;
  return err;
}
