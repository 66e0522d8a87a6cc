import { ACTION_ROUTES } from './action-routes.ts';
import { fillPath } from './route-template.ts';
import type { AnyAction } from './api.ts';
import type { ErrorCode } from './errors.ts';

/**
 * The HTTP wire form of an action's request, from its route alone (main/contract/action-routes.ts), so that building
 * one loads no schema; main/contract/action-http.ts reads the answers.
 *
 * - GET and DELETE: what is left of the input after `:params` are filled goes into the query string.
 *   `undefined`/`null` are left out; strings as they are; numbers and booleans as `String(v)`; arrays repeat the key
 *   (an empty array is left out), so the server reads a key as an array when the schema says so; plain objects as
 *   JSON text.
 * - POST, PUT, PATCH: the rest as a JSON body (`{}` when empty).
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
  const { method, path: template } = ACTION_ROUTES[action];
  const { path, rest } = fillPath(template, (input ?? {}) as Record<string, unknown>);
  const inQuery = method === 'GET' || method === 'DELETE';
  return {
    method,
    path: `${path}${inQuery ? encodeQuery(rest) : ''}`,
    ...(inQuery ? {} : { body: JSON.stringify(rest) }),
  };
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
