import { actionRequest, decodeActionAnswer, type ApiAction, type ApiDispatch, type ApiInput, type StreamAction } from '../contract/index.ts';
import type { Result } from '../contract/errors.ts';
import type { RuntimeInfo } from '../contract/health.ts';
import { GatehouseError } from '../core/errors.ts';

/**
 * The service's actions over HTTP, for the CLI when a service is running:
 * the same ApiDispatch shape as the in-process one, the wire form derived
 * from API_ACTIONS (main/contract/action-http.ts). The service checks and
 * answers; nothing is validated here, so the answer is the service's own.
 */
export function httpDispatch(runtime: RuntimeInfo, adminKey: string) {
  const send = (req: { method: string; path: string; body?: string }) =>
    fetch(`${runtime.base_url}${req.path}`, {
      method: req.method,
      headers: { Authorization: `Bearer ${adminKey}`, ...(req.body !== undefined ? { 'Content-Type': 'application/json' } : {}) },
      ...(req.body !== undefined ? { body: req.body } : {}),
    });
  const unreachable = (e: unknown) => ({ ok: false as const, code: 'service_unavailable' as const, message: `the running service at ${runtime.base_url} did not answer (${(e as Error).message})` });

  const dispatch = (async (action: ApiAction, input: unknown): Promise<Result<unknown>> => {
    try {
      const res = await send(actionRequest(action, input));
      return decodeActionAnswer(action, res.status, await res.json().catch(() => undefined));
    } catch (e) {
      return unreachable(e);
    }
  }) as ApiDispatch;

  /** A download action's bytes, streamed to `out`; its error answer becomes the same GatehouseError as in-process. */
  async function download<A extends StreamAction>(action: A, input: ApiInput<A>, out: NodeJS.WritableStream): Promise<void> {
    let res: Response;
    try {
      res = await send(actionRequest(action, input));
    } catch (e) {
      const r = unreachable(e);
      throw new GatehouseError(r.code, r.message);
    }
    if (!res.ok || !res.body) {
      const r = decodeActionAnswer(action, res.status, await res.json().catch(() => undefined));
      throw r.ok ? new GatehouseError('internal_error', `${action} answered HTTP ${res.status}`) : new GatehouseError(r.code, r.message, r.details ?? {});
    }
    for await (const chunk of res.body as unknown as AsyncIterable<Uint8Array>) out.write(chunk);
  }

  return { dispatch, download };
}
