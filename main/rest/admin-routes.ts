import type { IncomingMessage, ServerResponse } from 'node:http';
import {
  ALL_ACTIONS,
  API_ACTIONS,
  type AnyAction,
  type ApiEvent,
  type Download,
  type EventFeed,
} from '../contract/api.ts';
import { HTTP_STATUS, type Result } from '../contract/errors.ts';
import type { Principal } from '../contract/principal.ts';
import type { Invoke } from '../core/admin/invoke.ts';
import type { Logger } from '../lib/logger.ts';
import { HttpError } from '../lib/http/http-error.ts';
import { Router, type Params } from '../lib/http/router.ts';
import { readBody, type BodyBudget } from '../lib/http/body.ts';
import { parseJson } from '../lib/http/json.ts';
import { sendJson } from '../lib/http/send.ts';
import { queryToInput } from './query-input.ts';
import { createAdmit, type AdmitDeps } from './admin-guard.ts';
import { SESSION_COOKIE } from './admin-auth.ts';
import type { SubRoutes } from './http-router.ts';

/** Admin bodies are small settings and token records. */
const ADMIN_MAX_BODY = 1024 * 1024;

export interface AdminRoutesDeps extends AdmitDeps {
  invoke: Invoke;
  log: Logger;
  /** memory shared by every body being read at once (with the MCP endpoint's) */
  bodyBudget?: BodyBudget;
}

interface Ctx {
  req: IncomingMessage;
  res: ServerResponse;
  params: Params;
  query: URLSearchParams;
  who: Principal;
}
type Handler = (c: Ctx) => Promise<void>;

/**
 * The admin API (under {ADMIN_PREFIX}/) and the local REST (README.md, "Connect the app to a cloud gateway") (under
 * {REST_PREFIX}/pro/): one route per API_ACTIONS entry, derived from it, so
 * nothing here is written per action. Each request passes the admit guards (which
 * names the caller's principal), then its raw input (query, or a JSON object
 * body, plus path parameters) goes to the core's invoke, which decides
 * whether this caller may, checks the input and runs the action; the answer
 * goes out in the action's envelope (JSON Result, seed shape, download, SSE).
 */
export function createAdminRoutes(deps: AdminRoutesDeps): { admin: SubRoutes; pro: SubRoutes } {
  const tables = { admin: new Router<Handler>(), rest: new Router<Handler>() };
  for (const action of ALL_ACTIONS) {
    const def = API_ACTIONS[action];
    tables['base' in def ? 'rest' : 'admin'].on(def.method, def.path, (c) => runAction(action, c, deps));
  }
  const admit = createAdmit(deps);
  const serve = (routes: Router<Handler>, where: string): SubRoutes =>
    async function handle(req, res, subpath, query) {
      const who = await admit(req);
      const method = req.method ?? 'GET';
      const match = routes.match(method, subpath);
      if (!match) throw new HttpError('not_found', `no ${where} route '${subpath.slice(0, 200)}'`);
      if (!match.handler)
        throw new HttpError('invalid_request', `${method} is not allowed on ${subpath.slice(0, 200)}`, {
          headers: { Allow: match.allow.join(', ') },
        });
      await match.handler({ req, res, params: match.params, query, who });
    };
  return { admin: serve(tables.admin, 'admin'), pro: serve(tables.rest, 'local REST') };
}

/** GET/DELETE take their input from the query, the others from a JSON object body; path params win. */
async function runAction(action: AnyAction, c: Ctx, deps: AdminRoutesDeps): Promise<void> {
  const def = API_ACTIONS[action];
  let raw: Record<string, unknown>;
  if (def.method === 'GET' || def.method === 'DELETE') raw = queryToInput(c.query, def.input);
  else {
    const body = await readBody(c.req, {
      limit: ADMIN_MAX_BODY,
      ...(deps.bodyBudget ? { budget: deps.bodyBudget } : {}),
    });
    const value = body.length === 0 ? {} : parseJson(body);
    if (typeof value !== 'object' || value === null || Array.isArray(value))
      throw new HttpError('invalid_value', 'the request body must be a JSON object');
    raw = value as Record<string, unknown>;
  }
  for (const [k, v] of Object.entries(c.params)) raw[k] = v;
  const requestId = c.res.getHeader('x-request-id');
  const result = await deps.invoke(action, raw, c.who, {
    request_id: typeof requestId === 'string' ? requestId : null,
  });
  return answer(action, result, c, deps.log);
}

function answer(action: AnyAction, result: Result<unknown>, c: Ctx, log: Logger): void | Promise<void> {
  const def = API_ACTIONS[action];
  if ('base' in def) return sendSeed(c.res, result);
  if (!result.ok) return sendResult(c.res, result);
  if ('stream' in def)
    return def.stream === 'events'
      ? streamEvents(c.req, c.res, result.data as EventFeed)
      : download(c.res, result.data as Download, log);
  if (action === 'console.logout' && c.who.kind === 'person' && c.who.via === 'session') {
    c.res.setHeader('Set-Cookie', `${SESSION_COOKIE}=; Path=/; HttpOnly; SameSite=Strict; Max-Age=0`);
  }
  return sendResult(c.res, result);
}

/** An action's Result: 200 with `{ok:true, data}`, or its error code's status with `{ok:false, code, message}`. */
function sendResult(res: ServerResponse, result: Result<unknown>): void {
  sendJson(res, result.ok ? 200 : (HTTP_STATUS[result.code] ?? 400), result);
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
  res.writeHead(200, {
    'Content-Type': 'text/event-stream',
    'Cache-Control': 'no-store',
    Connection: 'keep-alive',
    'X-Accel-Buffering': 'no',
  });
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

/**
 * A download action's file, streamed. A file that fails part-way is cut off, not ended: ending it would send the
 * chunked body's last chunk, and the client would take what it got (part of an audit log) for the whole file.
 */
export async function download(res: ServerResponse, file: Download, log: Logger): Promise<void> {
  res.writeHead(200, {
    'Content-Type': file.content_type,
    'Content-Disposition': `attachment; filename="${file.filename}"`,
    'Cache-Control': 'no-store',
  });
  // Sent now, so that a file that fails before its first byte reaches the client as broken off, not as no answer.
  res.flushHeaders();
  try {
    await file.write(res);
  } catch (e) {
    log.error('download failed', { file: file.filename, error: (e as Error).message });
    res.destroy();
    return;
  }
  res.end();
}
