import { ACTION_ROUTES } from '../contract/action-routes.ts';
import { actionRequest, type ActionRequest } from '../contract/action-request.ts';
import type { ApiAction, ApiInput, RawDispatch, StreamAction } from '../contract/api.ts';
import type { ErrorCode, Result } from '../contract/errors.ts';
import type { RuntimeInfo } from '../contract/health.ts';
import { GatehouseError } from '../core/errors.ts';
import { VERSION } from '../version.ts';
import { exchange as send, type RawResponse } from './loopback-http.ts';

/**
 * The service's actions over HTTP, for the CLI when a service is running: the same ApiDispatch shape as the
 * in-process one, the wire form derived from API_ACTIONS (main/contract/action-routes.ts). The service checks the
 * input and answers. A service of this same version answers what the in-process core would hand the command (the
 * core's own output, as JSON), so its answer is taken as it is, and the contract's schemas are not loaded: they were
 * most of a command's start-up. A service of another version (one left running across an upgrade) has its answers
 * checked against this version's schemas (main/contract/action-http.ts), so a command never reads a shape it does
 * not know. Its own small HTTP/1.1 client (main/cli/loopback-http.ts) rather than fetch or node:http: a CLI command
 * makes one request on loopback, and either of those cost more than the request itself.
 */

export function httpDispatch(runtime: RuntimeInfo, adminKey: string) {
  const call = (req: ActionRequest) =>
    send(
      `${runtime.base_url}${req.path}`,
      req.method,
      {
        Authorization: `Bearer ${adminKey}`,
        ...(req.body !== undefined ? { 'Content-Type': 'application/json' } : {}),
      },
      req.body,
    );
  const unreachable = (e: unknown) => ({
    ok: false as const,
    code: 'service_unavailable' as const,
    message: `the running service at ${runtime.base_url} did not answer (${(e as Error).message})`,
  });

  const sameVersion = runtime.version === VERSION;
  const decode = async (action: ApiAction | StreamAction, status: number, body: unknown): Promise<Result<unknown>> =>
    (sameVersion ? ownAnswer(action, status, body) : undefined) ??
    (await import('../contract/action-http.ts')).decodeActionAnswer(action, status, body);

  const dispatch = (async (action: ApiAction, input: unknown): Promise<Result<unknown>> => {
    try {
      const res = await call(actionRequest(action, input));
      return await decode(action, res.status, await res.json().catch(() => undefined));
    } catch (e) {
      return unreachable(e);
    }
  }) as RawDispatch;

  /** A download action's bytes, streamed to `out`; its error answer becomes the same GatehouseError as in-process. */
  async function download<A extends StreamAction>(
    action: A,
    input: ApiInput<A>,
    out: NodeJS.WritableStream,
  ): Promise<void> {
    let res: RawResponse;
    try {
      res = await call(actionRequest(action, input));
    } catch (e) {
      const r = unreachable(e);
      throw new GatehouseError(r.code, r.message);
    }
    if (!res.ok) {
      const r = await decode(action, res.status, await res.json().catch(() => undefined));
      throw r.ok
        ? new GatehouseError('internal_error', `${action} answered HTTP ${res.status}`)
        : new GatehouseError(r.code, r.message, r.details ?? {});
    }
    try {
      for await (const chunk of res.body) out.write(chunk);
    } catch (e) {
      // The service cuts off a file that failed part-way (main/rest/admin-routes.ts): what came is not the file.
      throw new GatehouseError(
        'service_unavailable',
        `the service's answer to ${action} broke off (${(e as Error).message}): what was written is incomplete`,
      );
    }
  }

  return { dispatch, download };
}

/**
 * An answer in the admin API's envelope from a service of this version, taken as it is: a success (`{ok:true, data}`
 * with a 2xx) as its data, an error (`{ok:false, code, message}` with a 4xx or 5xx) as that error, so that a refusal
 * loads no schema either. Anything else (the local REST's envelope; a body from a proxy or a crash) is undefined, for
 * the full check.
 */
function ownAnswer(action: ApiAction | StreamAction, status: number, body: unknown): Result<unknown> | undefined {
  if (ACTION_ROUTES[action].rest || typeof body !== 'object' || body === null) return undefined;
  const b = body as { ok?: unknown; data?: unknown; code?: unknown; message?: unknown; details?: unknown };
  if (b.ok === true) return status >= 200 && status < 300 && 'data' in b ? { ok: true, data: b.data } : undefined;
  // The code is printed as it is (`gatehouse: ... [code]`): one of ours is lower-case words and underscores.
  if (b.ok !== false || status < 400 || typeof b.code !== 'string' || !/^[a-z_]{1,64}$/.test(b.code)) return undefined;
  if (typeof b.message !== 'string') return undefined;
  const details =
    typeof b.details === 'object' && b.details !== null && !Array.isArray(b.details) ? b.details : undefined;
  return {
    ok: false,
    code: b.code as ErrorCode,
    message: b.message,
    ...(details ? { details: details as Record<string, unknown> } : {}),
  };
}
