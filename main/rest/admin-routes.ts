import type { IncomingMessage, ServerResponse } from 'node:http';
import { ALL_ACTIONS, API_ACTIONS, actionPrefix, type AnyAction, type ApiEvent, type Download, type EventFeed } from '../contract/api.ts';
import { HTTP_STATUS, type Result } from '../contract/errors.ts';
import type { Principal } from '../contract/principal.ts';
import type { Invoke } from '../core/invoke.ts';
import type { Logger } from '../core/ports.ts';
import { queryToInput } from './query-input.ts';
import { admitAdmin, type AdmitDeps } from './admin-guard.ts';
import { SESSION_COOKIE } from './admin-auth.ts';
import { readJsonBody, sendError, sendJson, sendResult } from './http-util.ts';

export interface AdminRoutesDeps extends AdmitDeps {
  invoke: Invoke;
  log: Logger;
}

interface Route {
  action: AnyAction;
  method: string;
  pattern: RegExp;
  params: string[];
}

/** Routes derived from API_ACTIONS (admin API and local REST): nothing here is written per action. */
const ROUTES: Route[] = ALL_ACTIONS.map((action) => {
  const def = API_ACTIONS[action];
  const params: string[] = [];
  const path = `${actionPrefix(action)}/${def.path}`.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
  const pattern = new RegExp(`^${path.replace(/:([a-z_]+)/g, (_m, p: string) => (params.push(p), '([^/]+)'))}$`);
  return { action, method: def.method, pattern, params };
});

/**
 * The admin API under {ADMIN_PREFIX}/ and seed part C's local REST under
 * {REST_PREFIX}/pro/: the gate (admitAdmin), then the raw input from the
 * query or the JSON body, then the core's invoke with the caller's
 * principal, then the answer in the action's envelope.
 */
export function createAdminRoutes(deps: AdminRoutesDeps) {
  return async function handle(req: IncomingMessage, res: ServerResponse, url: URL): Promise<void> {
    const who = admitAdmin(req, res, deps);
    if (!who) return;
    const method = req.method ?? 'GET';
    const path = url.pathname;
    const route = ROUTES.find((r) => r.method === method && r.pattern.test(path));
    if (!route) {
      const known = ROUTES.some((r) => r.pattern.test(path));
      return sendError(res, known ? 'invalid_request' : 'not_found', known ? `${method} is not allowed on ${path}` : `no route '${path}'`);
    }
    const def = API_ACTIONS[route.action];
    let raw: Record<string, unknown>;
    if (method === 'GET' || method === 'DELETE') raw = queryToInput(url.searchParams, def.input);
    else {
      const body = await readJsonBody(req);
      if (!body.ok) return sendError(res, body.code, body.message);
      if (typeof body.value !== 'object' || body.value === null || Array.isArray(body.value)) return sendError(res, 'invalid_value', 'the request body must be a JSON object');
      raw = body.value as Record<string, unknown>;
    }
    const m = route.pattern.exec(path)!;
    try {
      route.params.forEach((p, i) => (raw[p] = decodeURIComponent(m[i + 1]!)));
    } catch {
      return sendError(res, 'invalid_value', `a path segment of ${path} is not valid percent-encoding`);
    }
    const result = await deps.invoke(route.action, raw, who, { request_id: requestIdOf(res) });
    return answer(req, res, route.action, result, who, deps.log);
  };
}

function requestIdOf(res: ServerResponse): string | null {
  const id = res.getHeader('x-request-id');
  return typeof id === 'string' ? id : null;
}

function answer(req: IncomingMessage, res: ServerResponse, action: AnyAction, result: Result<unknown>, who: Principal, log: Logger): void | Promise<void> {
  const def = API_ACTIONS[action];
  if ('base' in def) return sendSeed(res, result);
  if (!result.ok) return sendResult(res, result);
  if ('stream' in def) {
    if (def.stream === 'events') return streamEvents(req, res, result.data as EventFeed);
    return download(res, result.data as Download, log);
  }
  if (action === 'console.logout' && who.kind === 'person' && who.via === 'session') {
    res.setHeader('Set-Cookie', `${SESSION_COOKIE}=; Path=/; HttpOnly; SameSite=Strict; Max-Age=0`);
  }
  return sendResult(res, result);
}

/** Seed part C's envelope: the data as the whole body, or `{success:false, error:{code, message, retryable}}`. */
function sendSeed(res: ServerResponse, result: Result<unknown>): void {
  if (result.ok) return sendJson(res, 200, result.data);
  const retryAfter = result.details?.retry_after;
  sendJson(
    res,
    HTTP_STATUS[result.code] ?? 400,
    { success: false, error: { code: result.code, message: result.message, retryable: false } },
    typeof retryAfter === 'number' ? { 'Retry-After': String(retryAfter) } : {},
  );
}

function streamEvents(req: IncomingMessage, res: ServerResponse, feed: EventFeed): void {
  res.writeHead(200, { 'Content-Type': 'text/event-stream', 'Cache-Control': 'no-store', Connection: 'keep-alive', 'X-Accel-Buffering': 'no' });
  res.write(': connected\n\n');
  const send = (e: ApiEvent) => res.write(`data: ${JSON.stringify(e)}\n\n`);
  const off = feed.subscribe(send);
  const beat = setInterval(() => res.write(': keep-alive\n\n'), 15_000);
  const stop = () => {
    clearInterval(beat);
    off();
  };
  req.on('close', stop);
  res.on('close', stop);
}

async function download(res: ServerResponse, file: Download, log: Logger): Promise<void> {
  res.writeHead(200, {
    'Content-Type': file.content_type,
    'Content-Disposition': `attachment; filename="${file.filename}"`,
    'Cache-Control': 'no-store',
  });
  try {
    await file.write(res);
  } catch (e) {
    log.error('download failed', { file: file.filename, error: (e as Error).message });
  }
  res.end();
}
