import { ProtocolError, type Server } from '@modelcontextprotocol/server';
import { JSONRPC_CODES } from '../contract/errors.ts';
import type { CallContext } from '../core/calls/tool.ts';
import type { SurfaceCalls } from '../core/calls/surface-calls.ts';
import { GatehouseError, toErrorShape } from '../core/errors.ts';
import { MAX_SUBSCRIPTIONS_PER_TOKEN, type TokenSubscriptions } from './resource-subscriptions.ts';
import { sdkAnswer } from './sdk-shapes.ts';

/** What a request's server asks of the plugin surfaces (SurfaceCalls, or a view's narrowing of it). */
export type ServerSurfaces = Pick<
  SurfaceCalls,
  | 'prompts'
  | 'resources'
  | 'templates'
  | 'ownsUri'
  | 'readResource'
  | 'getPrompt'
  | 'offers'
  | 'complete'
  | 'subscribe'
  | 'unsubscribe'
  | 'instructions'
  | 'setLogLevel'
>;

/**
 * A refusal or failure of a prompt get or resource read as the JSON-RPC
 * error: a missing and a hidden one answer alike (-32602), and an upstream's
 * own protocol error (it found no such resource, the params wrong, the
 * method unknown) keeps its code (connection.ts maps it to ours).
 */
export function surfaceError(e: unknown, ctx: CallContext, extra: Record<string, unknown>): ProtocolError {
  const shape = toErrorShape(e);
  const code =
    shape.code === 'not_found' || shape.code === 'invalid_params'
      ? JSONRPC_CODES.invalid_params
      : shape.code === 'policy_denied'
        ? JSONRPC_CODES.forbidden
        : shape.code === 'method_not_found' || shape.code === 'invalid_request'
          ? JSONRPC_CODES[shape.code]
          : JSONRPC_CODES.internal_error;
  return new ProtocolError(code, shape.message, {
    code: shape.code,
    request_id: ctx.request_id,
    ...(shape.code === 'not_found' ? extra : {}),
  });
}

/**
 * prompts/list, prompts/get and resources/templates/list: what plugin
 * surfaces (upstream MCP servers) offer this caller. Built-in plugins have
 * no prompts or templates, so these lists are the surfaces' only.
 */
export function installSurfaceHandlers(
  server: Server,
  ctx: CallContext,
  surfaces: ServerSurfaces,
  subscriptions?: TokenSubscriptions,
): void {
  server.setRequestHandler('prompts/list', async () => ({ prompts: sdkAnswer(surfaces.prompts(ctx)) }));

  server.setRequestHandler('prompts/get', async (request, extra) => {
    const call: CallContext = extra.mcpReq.signal ? { ...ctx, signal: extra.mcpReq.signal } : ctx;
    try {
      return sdkAnswer(await surfaces.getPrompt(request.params.name, request.params.arguments ?? {}, call));
    } catch (e) {
      throw surfaceError(e, ctx, { name: request.params.name.slice(0, 128) });
    }
  });

  server.setRequestHandler('resources/templates/list', async () => ({
    resourceTemplates: sdkAnswer(surfaces.templates(ctx)),
  }));

  if (subscriptions) installSubscriptions(server, ctx, surfaces, subscriptions);

  // Only where the capability is advertised (some upstream this caller sees completes): elsewhere the method is unknown.
  if (surfaces.offers(ctx).completions)
    server.setRequestHandler('completion/complete', async (request, extra) => {
      const call: CallContext = extra.mcpReq.signal ? { ...ctx, signal: extra.mcpReq.signal } : ctx;
      const { ref, argument, context } = request.params;
      try {
        return sdkAnswer(
          await surfaces.complete(
            {
              ref: ref.type === 'ref/prompt' ? { type: ref.type, name: ref.name } : { type: ref.type, uri: ref.uri },
              argument,
              ...(context ? { context } : {}),
            },
            call,
          ),
        );
      } catch (e) {
        throw surfaceError(
          e,
          ctx,
          ref.type === 'ref/prompt' ? { name: ref.name.slice(0, 128) } : { uri: ref.uri.slice(0, 300) },
        );
      }
    });
}

/** resources/read of a URI a surface owns (null when none does: a built-in resource or an unknown URI). */
export async function readSurfaceResource(
  uri: string,
  ctx: CallContext,
  surfaces: ServerSurfaces,
): Promise<Record<string, unknown> | null> {
  if (!surfaces.ownsUri(uri)) return null;
  try {
    return await surfaces.readResource(uri, ctx);
  } catch (e) {
    throw surfaceError(e, ctx, { uri: uri.slice(0, 300) });
  }
}

/** Who holds a token's 2025-era subscription at the upstream (a listen stream holds its own). */
export const tokenHolder = (tokenId: string): string => `token:${tokenId}`;

/**
 * resources/subscribe and unsubscribe (2025 era; 2026-07-28 subscribes in `subscriptions/listen`), where some
 * upstream the caller sees offers subscriptions. A subscription is its token's (the era has no sessions here):
 * the token's event streams hear the resource's notifications/resources/updated.
 */
function installSubscriptions(
  server: Server,
  ctx: CallContext,
  surfaces: ServerSurfaces,
  subscriptions: TokenSubscriptions,
): void {
  const tokenId = ctx.token?.id;
  server.setRequestHandler('resources/subscribe', async (request, extra) => {
    const { uri } = request.params;
    const call: CallContext = extra.mcpReq.signal ? { ...ctx, signal: extra.mcpReq.signal } : ctx;
    try {
      if (!tokenId) throw new GatehouseError('not_found', `resource not found: ${uri.slice(0, 300)}`);
      const held = subscriptions.has(tokenId, uri);
      if (!held && !subscriptions.add(tokenId, uri))
        throw new GatehouseError(
          'invalid_params',
          `this token holds ${MAX_SUBSCRIPTIONS_PER_TOKEN} resource subscriptions already; unsubscribe from one first`,
        );
      try {
        await surfaces.subscribe(uri, tokenHolder(tokenId), call);
      } catch (e) {
        // a subscription held already stays as it was
        if (!held) subscriptions.remove(tokenId, uri);
        throw e;
      }
      return {};
    } catch (e) {
      throw surfaceError(e, ctx, { uri: uri.slice(0, 300) });
    }
  });
  server.setRequestHandler('resources/unsubscribe', async (request) => {
    const { uri } = request.params;
    if (tokenId && subscriptions.has(tokenId, uri)) {
      subscriptions.remove(tokenId, uri);
      await surfaces.unsubscribe(uri, tokenHolder(tokenId));
    }
    return {};
  });
}
