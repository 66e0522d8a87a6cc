import { z } from 'zod';
import { statusCode } from './action-request.ts';
import { API_ACTIONS, type AnyAction } from './api.ts';
import { ErrorBody, ErrorCode, type Result } from './errors.ts';
import { lazySchema } from './lazy-schema.ts';

/**
 * An HTTP answer of the service read back as a Result, for every HTTP client (the console in a browser, the CLI
 * talking to a running service); the requests are built in main/contract/action-request.ts.
 *
 * - The admin API answers `{ok:true, data}` / `{ok:false, code, message}`;
 * - the local REST (`base: 'rest'`) answers in its own envelope (`{success, ...}`), the whole body being the data, or
 *   `{success:false, error:{code, message}}`.
 */
export { actionRequest, encodeQuery, statusCode, type ActionRequest } from './action-request.ts';

const SeedError = lazySchema(() =>
  z.object({
    success: z.literal(false),
    error: z.object({ code: ErrorCode, message: z.string() }).loose(),
  }),
);

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
