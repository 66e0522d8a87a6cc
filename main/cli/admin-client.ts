import { API_ACTIONS, actionPath, type ApiAction, type ApiDispatch } from '../contract/api.ts';
import type { Result } from '../contract/errors.ts';
import type { RuntimeInfo } from '../contract/health.ts';

/**
 * The admin API over HTTP, for the CLI when a service is running: the same
 * ApiDispatch shape as the in-process one, derived from API_ACTIONS.
 */
export function httpDispatch(runtime: RuntimeInfo, adminKey: string): ApiDispatch & { raw: (method: string, path: string) => Promise<Response> } {
  const raw = (method: string, path: string, body?: string) =>
    fetch(`${runtime.admin_url}/${path}`, {
      method,
      headers: { Authorization: `Bearer ${adminKey}`, ...(body ? { 'Content-Type': 'application/json' } : {}) },
      ...(body ? { body } : {}),
    });
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
