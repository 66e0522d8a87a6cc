import { request } from 'node:http';
import { API_ACTIONS, actionPath, type ApiAction, type ApiDispatch } from '../contract/api.ts';
import type { Result } from '../contract/errors.ts';
import type { RuntimeInfo } from '../contract/health.ts';

/**
 * The admin API over HTTP, for the CLI when a service is running: the same
 * ApiDispatch shape as the in-process one, derived from API_ACTIONS. Plain
 * node:http rather than fetch: a CLI command makes one request, and loading
 * fetch's machinery (undici) cost more than the request itself.
 */

export interface RawResponse {
  status: number;
  ok: boolean;
  /** the body as it arrives */
  body: AsyncIterable<Uint8Array>;
  json(): Promise<unknown>;
}

function send(url: string, method: string, headers: Record<string, string>, body?: string): Promise<RawResponse> {
  return new Promise((resolve, reject) => {
    const req = request(url, { method, headers: { ...headers, ...(body ? { 'Content-Length': String(Buffer.byteLength(body)) } : {}) } }, (res) => {
      const status = res.statusCode ?? 0;
      resolve({
        status,
        ok: status >= 200 && status < 300,
        body: res,
        async json() {
          const chunks: Buffer[] = [];
          for await (const c of res) chunks.push(c as Buffer);
          return JSON.parse(Buffer.concat(chunks).toString('utf8')) as unknown;
        },
      });
    });
    req.once('error', reject);
    req.end(body);
  });
}

export function httpDispatch(runtime: RuntimeInfo, adminKey: string): ApiDispatch & { raw: (method: string, path: string) => Promise<RawResponse> } {
  const raw = (method: string, path: string, body?: string) =>
    send(`${runtime.admin_url}/${path}`, method, { Authorization: `Bearer ${adminKey}`, ...(body ? { 'Content-Type': 'application/json' } : {}) }, body);
  const dispatch = (async (action: ApiAction, input: Record<string, unknown>): Promise<Result<unknown>> => {
    const def = API_ACTIONS[action];
    const { path, rest } = actionPath(action, input ?? {});
    let url = path;
    let body: string | undefined;
    if (def.method === 'GET' || def.method === 'DELETE') {
      const q = new URLSearchParams();
      for (const [k, v] of Object.entries(rest)) {
        if (v === undefined) continue;
        for (const item of Array.isArray(v) ? v : [v]) q.append(k, String(item));
      }
      if ([...q.keys()].length) url += `?${q}`;
    } else body = JSON.stringify(rest);
    try {
      const res = await raw(def.method, url, body);
      return (await res.json()) as Result<unknown>;
    } catch (e) {
      return { ok: false, code: 'service_unavailable', message: `the running service at ${runtime.base_url} did not answer (${(e as Error).message})` };
    }
  }) as ApiDispatch;
  return Object.assign(dispatch, { raw: (m: string, p: string) => raw(m, p) });
}
