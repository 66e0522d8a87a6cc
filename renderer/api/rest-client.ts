import { ADMIN_PREFIX, API_ACTIONS, API_EVENTS_PATH, ApiEvent, CONSOLE_PATH, CSRF_HEADER, ErrorBody, actionPath } from '../../main/contract/index.ts';
import type { Api, ApiAction, ErrorCode, Result } from '../../main/contract/index.ts';
import { apiFrom } from './api-from.ts';
import { createEventHub } from './event-hub.ts';

/**
 * Browser mode: the console served by the headless service at
 * `{base_url}/console/` talks to the admin REST at `{base_url}{ADMIN_PREFIX}/...`.
 * Every method is derived from API_ACTIONS; nothing here knows one action
 * from another.
 *
 * Wire format (the server parses it back with the action's input schema):
 * - GET and DELETE: what is left of the input after `:params` are filled goes
 *   into the query string. `undefined`/`null` are left out; strings as they are;
 *   numbers and booleans as `String(v)` ("50", "true"); arrays repeat the key
 *   (`tool=a&tool=b`; an empty array is left out), so the server reads a key as
 *   an array when the schema says so; plain objects as JSON text.
 * - POST, PUT, PATCH: the rest as a JSON body (`{}` when empty) with
 *   `Content-Type: application/json`.
 * - Every state-changing call (all but GET) carries `X-Gatehouse-CSRF: 1`;
 *   the server refuses a cookie-authenticated one without it (a cross-site
 *   form, or a fetch without a CORS preflight, cannot set it).
 * - Responses: `{ok:true, data}` or `{ok:false, code, message}`.
 * - The session is an HttpOnly cookie, sent with `credentials: 'same-origin'`.
 */

export { CSRF_HEADER };

export interface RestApiOptions {
  fetch?: typeof fetch;
  EventSource?: new (url: string) => EventSource;
  /** first reconnect delay in ms, doubled up to `maxReconnectMs` */
  reconnectMs?: number;
  maxReconnectMs?: number;
}

/** `{base_url}` of the page's own service: the part of the address before `/console/`. */
export function defaultBaseUrl(loc: Pick<Location, 'origin' | 'pathname'> = location): string {
  const at = loc.pathname.indexOf(CONSOLE_PATH);
  return at > 0 ? loc.origin + loc.pathname.slice(0, at) : loc.origin;
}

export function encodeQuery(rest: Record<string, unknown>): string {
  const params = new URLSearchParams();
  for (const [key, value] of Object.entries(rest)) {
    if (value === undefined || value === null) continue;
    if (Array.isArray(value)) {
      for (const v of value) params.append(key, scalar(v));
    } else {
      params.append(key, scalar(value));
    }
  }
  const text = params.toString();
  return text ? `?${text}` : '';
}

function scalar(value: unknown): string {
  if (typeof value === 'string') return value;
  if (typeof value === 'number' || typeof value === 'boolean') return String(value);
  return JSON.stringify(value);
}

/** Build an admin URL the same way the actions do (used for download links). */
export function adminUrl(baseUrl: string, path: string, query: Record<string, unknown> = {}): string {
  return `${baseUrl}${ADMIN_PREFIX}/${path}${encodeQuery(query)}`;
}

const unavailable = (message: string): Result<never> => ({ ok: false, code: 'service_unavailable', message });

function statusCode(status: number): ErrorCode {
  if (status === 401) return 'unauthorized';
  if (status === 403) return 'forbidden';
  if (status === 404) return 'not_found';
  if (status === 413) return 'payload_too_large';
  if (status === 429) return 'rate_limited';
  if (status >= 502 && status <= 504) return 'service_unavailable';
  if (status >= 400 && status < 500) return 'invalid_request';
  return 'internal_error';
}

export function createRestApi(baseUrl: string = defaultBaseUrl(), options: RestApiOptions = {}): Api {
  const doFetch = options.fetch ?? ((...args: Parameters<typeof fetch>) => fetch(...args));

  async function call(action: ApiAction, input: unknown): Promise<Result<unknown>> {
    const spec = API_ACTIONS[action];
    const { path, rest } = actionPath(action, (input ?? {}) as Record<string, unknown>);
    const inQuery = spec.method === 'GET' || spec.method === 'DELETE';
    const url = adminUrl(baseUrl, path, inQuery ? rest : {});
    const headers: Record<string, string> = { Accept: 'application/json' };
    if (spec.method !== 'GET') headers[CSRF_HEADER] = '1';
    if (!inQuery) headers['Content-Type'] = 'application/json';
    let response: Response;
    try {
      response = await doFetch(url, {
        method: spec.method,
        credentials: 'same-origin',
        headers,
        ...(inQuery ? {} : { body: JSON.stringify(rest) }),
      });
    } catch {
      return unavailable('The Gatehouse service cannot be reached. Is it running?');
    }
    let body: unknown;
    try {
      body = await response.json();
    } catch {
      return { ok: false, code: statusCode(response.status), message: `The service answered ${response.status} without a readable body.` };
    }
    const error = ErrorBody.safeParse(body);
    if (error.success) return error.data;
    if (!response.ok || typeof body !== 'object' || body === null || (body as { ok?: unknown }).ok !== true) {
      return { ok: false, code: statusCode(response.status), message: `The service answered ${response.status} with an unexpected body.` };
    }
    const data = spec.output.safeParse((body as { data?: unknown }).data);
    if (!data.success) {
      return { ok: false, code: 'internal_error', message: `The service's answer to ${action} does not match the console's contract.` };
    }
    return { ok: true, data: data.data };
  }

  const hub = createEventHub(() => openEventStream(baseUrl, options));
  return apiFrom(call, hub.subscribe);
}

/**
 * One EventSource for all listeners. EventSource retries by itself after a
 * dropped connection, but gives up for good (readyState CLOSED) when the
 * server answers with an error status; then we open a new one with backoff.
 * After any reconnect a `health` event tells the screens to reload, since
 * events sent while we were away are lost.
 */
function openEventStream(baseUrl: string, options: RestApiOptions) {
  const Source = options.EventSource ?? EventSource;
  const first = options.reconnectMs ?? 1000;
  const max = options.maxReconnectMs ?? 30_000;
  return (emit: (event: ApiEvent) => void): (() => void) => {
    let source: EventSource | null = null;
    let timer: ReturnType<typeof setTimeout> | null = null;
    let delay = first;
    let lost = false;
    let stopped = false;

    const open = () => {
      timer = null;
      const s = new Source(`${baseUrl}${ADMIN_PREFIX}/${API_EVENTS_PATH}`);
      source = s;
      s.onopen = () => {
        delay = first;
        if (lost) emit({ type: 'health' });
        lost = false;
      };
      s.onmessage = (message: MessageEvent) => {
        let raw: unknown;
        try {
          raw = JSON.parse(String(message.data));
        } catch {
          return;
        }
        const parsed = ApiEvent.safeParse(raw);
        if (parsed.success) emit(parsed.data);
      };
      s.onerror = () => {
        lost = true;
        if (s.readyState !== 2 /* CLOSED */ || stopped) return;
        s.close();
        timer = setTimeout(open, delay);
        delay = Math.min(delay * 2, max);
      };
    };
    open();
    return () => {
      stopped = true;
      if (timer) clearTimeout(timer);
      source?.close();
    };
  };
}
