import {
  API_EVENTS_PATH,
  ApiEvent,
  CONSOLE_PATH,
  CSRF_HEADER,
  actionPrefix,
  actionRequest,
  decodeActionAnswer,
  encodeQuery,
  statusCode,
} from '../../main/contract/index.ts';
import type { Api, ApiAction, Result } from '../../main/contract/index.ts';
import { apiFrom } from './api-from.ts';
import { createEventHub } from './event-hub.ts';

/**
 * Browser mode: the console served by the headless service at
 * `{base_url}/console/` talks to the admin REST at `{base_url}{ADMIN_PREFIX}/...`.
 * Every method is derived from API_ACTIONS, and the wire form (query, body,
 * answers) from main/contract/action-http.ts; nothing here knows one action
 * from another.
 * - Every state-changing call (all but GET) carries `X-Gatehouse-CSRF: 1`;
 *   the server refuses a cookie-authenticated one without it (a cross-site
 *   form, or a fetch without a CORS preflight, cannot set it).
 * - The session is an HttpOnly cookie, sent with `credentials: 'same-origin'`.
 */

export { CSRF_HEADER, encodeQuery };

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

const unavailable = (message: string): Result<never> => ({ ok: false, code: 'service_unavailable', message });

export function createRestApi(baseUrl: string = defaultBaseUrl(), options: RestApiOptions = {}): Api {
  const doFetch = options.fetch ?? ((...args: Parameters<typeof fetch>) => fetch(...args));

  async function call(action: ApiAction, input: unknown): Promise<Result<unknown>> {
    const req = actionRequest(action, input);
    const headers: Record<string, string> = { Accept: 'application/json' };
    if (req.method !== 'GET') headers[CSRF_HEADER] = '1';
    if (req.body !== undefined) headers['Content-Type'] = 'application/json';
    let response: Response;
    try {
      response = await doFetch(`${baseUrl}${req.path}`, {
        method: req.method,
        credentials: 'same-origin',
        headers,
        ...(req.body !== undefined ? { body: req.body } : {}),
      });
    } catch {
      return unavailable('The Gatehouse service cannot be reached. Is it running?');
    }
    let body: unknown;
    try {
      body = await response.json();
    } catch {
      return {
        ok: false,
        code: statusCode(response.status),
        message: `The service answered ${response.status} without a readable body.`,
      };
    }
    return decodeActionAnswer(action, response.status, body);
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
      const s = new Source(`${baseUrl}${actionPrefix('events.subscribe')}/${API_EVENTS_PATH}`);
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
