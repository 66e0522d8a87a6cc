import type { IncomingMessage, ServerResponse } from 'node:http';
import { API_ACTIONS, AUDIT_EXPORT_PATH, type ApiAction, type ApiDispatch, type ApiEvent } from '../contract/api.ts';
import { AuditQuery } from '../contract/audit.ts';
import type { EventHub } from '../core/events.ts';
import type { Logger } from '../core/ports.ts';
import type { AdminAuth } from './admin-auth.ts';
import { queryToInput } from './query-input.ts';
import { admitAdmin } from './admin-guard.ts';
import { readJsonBody, sendError, sendResult } from './http-util.ts';

export interface AdminRoutesDeps {
  dispatch: ApiDispatch;
  auth: AdminAuth;
  events: EventHub;
  /** the service's own origin, e.g. http://127.0.0.1:7823 */
  origin: () => string;
  exportAudit: (q: Omit<AuditQuery, 'limit' | 'cursor'>, format: 'csv' | 'jsonl', out: NodeJS.WritableStream) => Promise<number>;
  /** a fresh one-time console login link (admin key only: the CLI's `console-link`) */
  loginLink: () => string;
  log: Logger;
}

interface Route {
  action: ApiAction;
  method: string;
  pattern: RegExp;
  params: string[];
}

/** Routes derived from API_ACTIONS: nothing here is written per action. */
const ROUTES: Route[] = (Object.keys(API_ACTIONS) as ApiAction[]).map((action) => {
  const def = API_ACTIONS[action];
  const params: string[] = [];
  const pattern = new RegExp(`^${def.path.replace(/:([a-z_]+)/g, (_m, p: string) => (params.push(p), '([^/]+)'))}$`);
  return { action, method: def.method, pattern, params };
});


/** The admin API under {REST_PREFIX}/admin/, behind admitAdmin. */
export function createAdminRoutes(deps: AdminRoutesDeps) {
  return async function handle(req: IncomingMessage, res: ServerResponse, subpath: string, url: URL): Promise<void> {
    const who = admitAdmin(req, res, deps.auth, deps.origin());
    if (!who) return;
    const method = req.method ?? 'GET';

    if (method === 'GET' && subpath === 'events') return streamEvents(req, res, deps.events);
    if (method === 'POST' && subpath === 'logout') {
      deps.auth.endSession(req);
      res.writeHead(204, { 'Set-Cookie': 'gatehouse_session=; Path=/; HttpOnly; SameSite=Strict; Max-Age=0' });
      return void res.end();
    }
    if (method === 'POST' && subpath === 'login-link') {
      if (who.kind !== 'admin-key') return sendError(res, 'forbidden', 'only the local admin key may issue login links');
      return sendResult(res, { ok: true, data: { url: deps.loginLink() } });
    }
    if (method === 'GET' && subpath === AUDIT_EXPORT_PATH) return exportAudit(res, url, deps);

    for (const route of ROUTES) {
      const m = route.pattern.exec(subpath);
      if (!m) continue;
      if (route.method !== method) continue;
      let raw: Record<string, unknown>;
      if (method === 'GET' || method === 'DELETE') raw = queryToInput(url.searchParams, API_ACTIONS[route.action].input);
      else {
        const body = await readJsonBody(req);
        if (!body.ok) return sendError(res, body.code, body.message);
        if (typeof body.value !== 'object' || body.value === null || Array.isArray(body.value)) return sendError(res, 'invalid_value', 'the request body must be a JSON object');
        raw = body.value as Record<string, unknown>;
      }
      route.params.forEach((p, i) => (raw[p] = decodeURIComponent(m[i + 1]!)));
      const parsed = API_ACTIONS[route.action].input.safeParse(raw);
      if (!parsed.success) {
        const issue = parsed.error.issues[0];
        return sendError(res, 'invalid_value', `${route.action}: ${issue?.path.join('.') || 'input'}: ${issue?.message}`);
      }
      return sendResult(res, await deps.dispatch(route.action, parsed.data as never));
    }
    const known = ROUTES.some((r) => r.pattern.test(subpath));
    return sendError(res, known ? 'invalid_request' : 'not_found', known ? `${method} is not allowed on ${subpath}` : `no admin route '${subpath}'`);
  };
}

function streamEvents(req: IncomingMessage, res: ServerResponse, events: EventHub): void {
  res.writeHead(200, { 'Content-Type': 'text/event-stream', 'Cache-Control': 'no-store', Connection: 'keep-alive', 'X-Accel-Buffering': 'no' });
  res.write(': connected\n\n');
  const send = (e: ApiEvent) => res.write(`data: ${JSON.stringify(e)}\n\n`);
  const off = events.subscribe(send);
  const beat = setInterval(() => res.write(': keep-alive\n\n'), 15_000);
  const stop = () => {
    clearInterval(beat);
    off();
  };
  req.on('close', stop);
  res.on('close', stop);
}

async function exportAudit(res: ServerResponse, url: URL, deps: AdminRoutesDeps): Promise<void> {
  const format = url.searchParams.get('format') ?? 'csv';
  if (format !== 'csv' && format !== 'jsonl') return sendError(res, 'invalid_value', 'format must be csv or jsonl');
  const parsed = AuditQuery.omit({ limit: true, cursor: true }).safeParse(queryToInput(url.searchParams, AuditQuery));
  if (!parsed.success) return sendError(res, 'invalid_value', `audit export: ${parsed.error.issues[0]?.message}`);
  const stamp = new Date().toISOString().slice(0, 19).replace(/[:T]/g, '-');
  res.writeHead(200, {
    'Content-Type': format === 'csv' ? 'text/csv; charset=utf-8' : 'application/x-ndjson',
    'Content-Disposition': `attachment; filename="gatehouse-audit-${stamp}.${format}"`,
    'Cache-Control': 'no-store',
  });
  try {
    await deps.exportAudit(parsed.data, format, res);
  } catch (e) {
    deps.log.error('audit export failed', { error: (e as Error).message });
  }
  res.end();
}
