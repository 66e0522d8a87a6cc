import type { IncomingMessage, ServerResponse } from 'node:http';
import { API_ACTIONS, AUDIT_EXPORT_PATH, type ApiAction, type ApiDispatch, type ApiEvent } from '../contract/api.ts';
import { AuditQuery } from '../contract/audit.ts';
import type { EventHub } from '../core/events.ts';
import type { Logger } from '../core/ports.ts';
import { HTTP_STATUS, type Result } from '../contract/errors.ts';
import { HttpError } from '../lib/http/http-error.ts';
import { Router, type Params } from '../lib/http/router.ts';
import { readBody, type BodyBudget } from '../lib/http/body.ts';
import { parseJson } from '../lib/http/json.ts';
import { sendJson } from '../lib/http/send.ts';
import type { AdminAuth, AdminPrincipal } from './admin-auth.ts';
import { queryToInput } from './query-input.ts';
import { admitAdmin } from './admin-guard.ts';

/** Admin bodies are small settings and token records. */
const ADMIN_MAX_BODY = 1024 * 1024;

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
  /** memory shared by every body being read at once (with the MCP endpoint's) */
  bodyBudget?: BodyBudget;
}

type Handler = (req: IncomingMessage, res: ServerResponse, params: Params, query: URLSearchParams, who: AdminPrincipal) => Promise<void> | void;

/**
 * The admin API under {REST_PREFIX}/admin/, behind admitAdmin. One route
 * table: the few routes outside the contract (events, logout, login link,
 * audit export) and one route per API_ACTIONS entry, derived from it:
 * nothing here is written per action.
 */
export function createAdminRoutes(deps: AdminRoutesDeps) {
  const routes = new Router<Handler>()
    .get('events', (req, res) => streamEvents(req, res, deps.events))
    .post('logout', (req, res) => {
      deps.auth.endSession(req);
      res.writeHead(204, { 'Set-Cookie': 'gatehouse_session=; Path=/; HttpOnly; SameSite=Strict; Max-Age=0' });
      res.end();
    })
    .post('login-link', (_req, res, _p, _q, who) => {
      if (who.kind !== 'admin-key') throw new HttpError('forbidden', 'only the local admin key may issue login links');
      sendResult(res, { ok: true, data: { url: deps.loginLink() } });
    })
    .get(AUDIT_EXPORT_PATH, (_req, res, _p, query) => exportAudit(res, query, deps));
  for (const action of Object.keys(API_ACTIONS) as ApiAction[]) {
    const def = API_ACTIONS[action];
    routes.on(def.method, def.path, (req, res, params, query) => runAction(action, req, res, params, query, deps));
  }

  return async function handle(req: IncomingMessage, res: ServerResponse, subpath: string, query: URLSearchParams): Promise<void> {
    const who = admitAdmin(req, res, deps.auth, deps.origin());
    if (!who) return;
    const method = req.method ?? 'GET';
    const match = routes.match(method, subpath);
    if (!match) throw new HttpError('not_found', `no admin route '${subpath.slice(0, 200)}'`);
    if (!match.handler) throw new HttpError('invalid_request', `${method} is not allowed on ${subpath.slice(0, 200)}`, { headers: { Allow: match.allow.join(', ') } });
    await match.handler(req, res, match.params, query, who);
  };
}

/** GET/DELETE take their input from the query, the others from a JSON object body; path params win. */
async function runAction(action: ApiAction, req: IncomingMessage, res: ServerResponse, params: Params, query: URLSearchParams, deps: AdminRoutesDeps): Promise<void> {
  const def = API_ACTIONS[action];
  let raw: Record<string, unknown>;
  if (def.method === 'GET' || def.method === 'DELETE') raw = queryToInput(query, def.input);
  else {
    const body = await readBody(req, { limit: ADMIN_MAX_BODY, ...(deps.bodyBudget ? { budget: deps.bodyBudget } : {}) });
    const value = body.length === 0 ? {} : parseJson(body);
    if (typeof value !== 'object' || value === null || Array.isArray(value)) throw new HttpError('invalid_value', 'the request body must be a JSON object');
    raw = value as Record<string, unknown>;
  }
  for (const [k, v] of Object.entries(params)) raw[k] = v;
  const parsed = def.input.safeParse(raw);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    throw new HttpError('invalid_value', `${action}: ${issue?.path.join('.') || 'input'}: ${issue?.message}`);
  }
  sendResult(res, await deps.dispatch(action, parsed.data as never));
}

/** An action's Result: 200 with `{ok:true, data}`, or its error code's status with `{ok:false, code, message}`. */
function sendResult(res: ServerResponse, result: Result<unknown>): void {
  sendJson(res, result.ok ? 200 : (HTTP_STATUS[result.code] ?? 400), result);
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

async function exportAudit(res: ServerResponse, query: URLSearchParams, deps: AdminRoutesDeps): Promise<void> {
  const format = query.get('format') ?? 'csv';
  if (format !== 'csv' && format !== 'jsonl') throw new HttpError('invalid_value', 'format must be csv or jsonl');
  const parsed = AuditQuery.omit({ limit: true, cursor: true }).safeParse(queryToInput(query, AuditQuery));
  if (!parsed.success) throw new HttpError('invalid_value', `audit export: ${parsed.error.issues[0]?.message}`);
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
