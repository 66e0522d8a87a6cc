import { recordRequest } from '../metrics.ts';
import type { Ctx } from '../services/context.ts';
import type { CloudRequest } from './cloud-request.ts';

/** A path that matched no route, fit for the log: no query, and no download token (a bearer credential) even in a malformed download path. */
export function loggablePath(url: string): string {
  return url
    .split('?')[0]!
    .replace(/(\/updates\/files\/)[^/]*/, '$1:token')
    .slice(0, 200);
}

/**
 * The one place a finished request is written down: one service-log line
 * (error for 5xx, info for refusals, debug for the rest; routes by template,
 * never a raw path, which may carry a download token), the request-log entry
 * of its account, and the request metrics.
 */
export function logRequest(ctx: Ctx, c: CloudRequest): void {
  const status = c.statusOverride ?? c.res.statusCode;
  const ms = Math.round((performance.now() - c.started) * 10) / 10;
  const route = c.entry ? c.entry.template : loggablePath(c.req.url ?? '');
  const fields = {
    request_id: c.id,
    method: c.req.method,
    path: route,
    status,
    ms,
    ...(c.site ? { site_id: c.site.id } : {}),
    ...(c.account ? { account_id: c.account.account.id } : {}),
    ...(c.failure ? { error: c.failure } : {}),
  };
  if (c.code === 'gateway_unavailable') ctx.log.warn('request', fields);
  else if (status >= 500) ctx.log.error('request', fields);
  else if (status >= 400) ctx.log.info('request refused', fields);
  else ctx.log.debug('request', fields);
  recordRequest(c.entry ? c.entry.template : 'unmatched', String(c.req.method ?? '').slice(0, 10), status, ms / 1000);
  ctx.requestLog.record({
    at: new Date(ctx.now().getTime()).toISOString(),
    request_id: c.id,
    account_id: c.account?.account.id ?? c.site?.account_id ?? null,
    site_id: c.site?.id ?? null,
    auth: c.entry?.auth ?? 'none',
    endpoint: c.entry?.template ?? '-',
    method: String(c.req.method ?? '').slice(0, 10),
    status,
    code: c.code,
    ms,
  });
}
