import { request } from 'node:http';
import { actionRequest, type ActionRequest } from '../contract/action-http.ts';
import { decodeActionAnswer } from '../contract/action-http.ts';
import type { ApiAction, ApiInput, RawDispatch, StreamAction } from '../contract/api.ts';
import type { Result } from '../contract/errors.ts';
import type { RuntimeInfo } from '../contract/health.ts';
import { GatehouseError } from '../core/errors.ts';

/**
 * The service's actions over HTTP, for the CLI when a service is running:
 * the same ApiDispatch shape as the in-process one, the wire form derived
 * from API_ACTIONS (main/contract/action-http.ts). The service checks and
 * answers; nothing is validated here, so the answer is the service's own.
 * Plain node:http rather than fetch: a CLI command makes one request, and
 * loading fetch's machinery (undici) cost more than the request itself.
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
    const req = request(
      url,
      { method, headers: { ...headers, ...(body ? { 'Content-Length': String(Buffer.byteLength(body)) } : {}) } },
      (res) => {
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
      },
    );
    req.once('error', reject);
    req.end(body);
  });
}

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

  const dispatch = (async (action: ApiAction, input: unknown): Promise<Result<unknown>> => {
    try {
      const res = await call(actionRequest(action, input));
      return decodeActionAnswer(action, res.status, await res.json().catch(() => undefined));
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
      const r = decodeActionAnswer(action, res.status, await res.json().catch(() => undefined));
      throw r.ok
        ? new GatehouseError('internal_error', `${action} answered HTTP ${res.status}`)
        : new GatehouseError(r.code, r.message, r.details ?? {});
    }
    for await (const chunk of res.body) out.write(chunk);
  }

  return { dispatch, download };
}
