import { z } from 'zod';
import { API_ACTIONS, actionPath, actionPrefix, type AnyAction } from './api.ts';
import { ErrorBody, ErrorCode, type Result } from './errors.ts';

/**
 * The HTTP wire form of an action, once, for every HTTP client (the console
 * in a browser, the CLI talking to a running service); the server parses it
 * back with the action's input schema.
 *
 * - GET and DELETE: what is left of the input after `:params` are filled goes
 *   into the query string. `undefined`/`null` are left out; strings as they
 *   are; numbers and booleans as `String(v)`; arrays repeat the key (an empty
 *   array is left out), so the server reads a key as an array when the schema
 *   says so; plain objects as JSON text.
 * - POST, PUT, PATCH: the rest as a JSON body (`{}` when empty).
 * - Answers: the admin API's `{ok:true, data}` / `{ok:false, code, message}`;
 *   the local REST (`base: 'rest'`) answers in its own envelope (`{success, ...}`), the whole
 *   body being the data, or `{success:false, error:{code, message}}`.
 */
export interface ActionRequest {
  method: string;
  /** from the service's base URL: prefix, path, query */
  path: string;
  /** JSON text for POST/PUT/PATCH */
  body?: string;
}

export function encodeQuery(rest: Record<string, unknown>): string {
  const params = new URLSearchParams();
  for (const [key, value] of Object.entries(rest)) {
    if (value === undefined || value === null) continue;
    for (const v of Array.isArray(value) ? value : [value]) params.append(key, scalar(v));
  }
  const text = params.toString();
  return text ? `?${text}` : '';
}

function scalar(value: unknown): string {
  if (typeof value === 'string') return value;
  if (typeof value === 'number' || typeof value === 'boolean') return String(value);
  return JSON.stringify(value);
}

export function actionRequest(action: AnyAction, input: unknown): ActionRequest {
  const { method } = API_ACTIONS[action];
  const { path, rest } = actionPath(action, (input ?? {}) as Record<string, unknown>);
  const inQuery = method === 'GET' || method === 'DELETE';
  return {
    method,
    path: `${actionPrefix(action)}/${path}${inQuery ? encodeQuery(rest) : ''}`,
    ...(inQuery ? {} : { body: JSON.stringify(rest) }),
  };
}

const SeedError = z.object({
  success: z.literal(false),
  error: z.object({ code: ErrorCode, message: z.string() }).loose(),
});

/** An HTTP answer's body as a Result, checked against the action's output schema. */
export function decodeActionAnswer(action: AnyAction, status: number, body: unknown): Result<unknown> {
  const def = API_ACTIONS[action];
  const error = ErrorBody.safeParse(body);
  if (error.success) return error.data;
  const seed = SeedError.safeParse(body);
  if (seed.success) return { ok: false, code: seed.data.error.code, message: seed.data.error.message };
  const rest = 'base' in def;
  const payload = rest ? body : (body as { data?: unknown } | null)?.data;
  if (status >= 400 || typeof body !== 'object' || body === null || (!rest && (body as { ok?: unknown }).ok !== true)) {
    return { ok: false, code: statusCode(status), message: `The service answered ${status} with an unexpected body.` };
  }
  const data = def.output.safeParse(payload);
  if (!data.success)
    return {
      ok: false,
      code: 'internal_error',
      message: `The service's answer to ${action} does not match the contract.`,
    };
  return { ok: true, data: data.data };
}

/** An error code for an HTTP status that came without our error body (a proxy, a crash). */
export function statusCode(status: number): ErrorCode {
  if (status === 401) return 'unauthorized';
  if (status === 403) return 'forbidden';
  if (status === 404) return 'not_found';
  if (status === 413) return 'payload_too_large';
  if (status === 429) return 'rate_limited';
  if (status >= 502 && status <= 504) return 'service_unavailable';
  if (status >= 400 && status < 500) return 'invalid_request';
  return 'internal_error';
}
