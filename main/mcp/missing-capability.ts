import { ProtocolError } from '@modelcontextprotocol/server';
import { MISSING_CLIENT_CAPABILITY } from '../contract/errors.ts';
import type { CallContext } from '../core/calls/tool.ts';

/**
 * The ClientCapabilities object naming one capability the client did not
 * declare: `['elicitation', 'url']` is `{elicitation: {url: {}}}`. Only what
 * is missing is named, as the spec asks of `data.requiredCapabilities`.
 */
export function requiredCapabilities(path: readonly string[]): Record<string, unknown> {
  return path.reduceRight<Record<string, unknown>>((inner, key) => ({ [key]: inner }), {});
}

/**
 * MCP 2026-07-28's MissingRequiredClientCapability (-32021): the request
 * cannot be served without a capability the client did not declare on it.
 * The SDK answers this code with HTTP 400 wherever it is thrown, as the spec
 * requires. `data` keeps our string code and the request id next to the
 * spec's `requiredCapabilities`.
 */
export function missingCapabilityError(
  message: string,
  path: readonly string[],
  ctx: Pick<CallContext, 'request_id'>,
  details: Record<string, unknown> = {},
): ProtocolError {
  return new ProtocolError(MISSING_CLIENT_CAPABILITY, message, {
    ...details,
    requiredCapabilities: requiredCapabilities(path),
    code: 'client_capability_missing',
    request_id: ctx.request_id,
  });
}
