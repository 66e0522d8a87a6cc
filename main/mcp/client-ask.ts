import { CLIENT_CAPABILITIES_META_KEY, type ServerContext } from '@modelcontextprotocol/server';
import type { CallContext } from '../core/calls/tool.ts';
import { sdkIncoming, sdkOutgoing } from './sdk-shapes.ts';

/** How long a client (a person, an LLM) may take to answer one request, as the SDK's own shim allows; its progress extends it. */
const ASK_TIMEOUT_MS = 10 * 60 * 1000;

/**
 * What a tool may ask of the client that made the call, built per call from
 * the SDK's request context: the capabilities the client declared (every
 * 2026-07-28 request carries them; a 2025 client's come from its last
 * `initialize`, remembered by the endpoint) and, for a 2025-era exchange,
 * a way to send it a request now. A 2026-07-28 client is never sent one:
 * it is asked through the call's input-required answer instead.
 */
export function clientAskOf(
  extra: ServerContext,
  remembered: CallContext['clientCapabilities'],
): Pick<CallContext, 'clientCapabilities' | 'ask'> {
  const envelope = extra.mcpReq.envelope as Record<string, unknown> | undefined;
  if (envelope !== undefined) {
    const declared = envelope[CLIENT_CAPABILITIES_META_KEY];
    return typeof declared === 'object' && declared !== null
      ? { clientCapabilities: declared as Record<string, unknown> }
      : {};
  }
  return {
    ...(remembered ? { clientCapabilities: remembered } : {}),
    ask: async (request, signal) =>
      sdkIncoming(
        await extra.mcpReq.send(sdkOutgoing({ method: request.method, params: request.params }), {
          timeout: ASK_TIMEOUT_MS,
          resetTimeoutOnProgress: true,
          ...(signal ? { signal } : {}),
        }),
      ),
  };
}
