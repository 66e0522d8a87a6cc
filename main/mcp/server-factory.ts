import { Server, ProtocolError, inputRequired, LOG_LEVEL_META_KEY } from '@modelcontextprotocol/server';
import type { Settings } from '../contract/settings.ts';
import { JSONRPC_CODES } from '../contract/errors.ts';
import { clientMayUse, type CallContext } from '../core/calls/tool.ts';
import { viewerOf, type Registry, type RegisteredTool } from '../core/calls/registry.ts';
import type { Pipeline } from '../core/calls/pipeline.ts';
import type { PolicyListing } from '../core/policy/policy-listing.ts';
import { GatehouseError, toErrorShape } from '../core/errors.ts';
import { VERSION } from '../version.ts';
import { SERVED_PROTOCOL_VERSIONS } from './protocol-versions.ts';
import { requestStateOptions, resumeOf, wrapState } from './request-state.ts';
import { clientAskOf } from './client-ask.ts';
import { installSurfaceHandlers, readSurfaceResource, type ServerSurfaces } from './surface-handlers.ts';
import { ToolListCache } from './list-cache.ts';
import type { TaskDeps } from './staged-tasks.ts';
import { declaredCapabilities, serveTasks, taskAnswer, withApprovalLink } from './task-methods.ts';
import { missingCapabilityError } from './missing-capability.ts';
import { appOnly, rendersViews, UI_EXTENSION } from '../contract/mcp-apps.ts';
import type { SurfaceOffers } from '../core/calls/surface.ts';
import type { TokenSubscriptions } from './resource-subscriptions.ts';
import { sdkAnswer, sdkInternals, sdkNotification } from './sdk-shapes.ts';
import { composeInstructions } from '../plugins/upstream/instructions.ts';
import { isLogLevel, type LogLevel } from '../plugins/upstream/log-relay.ts';
import type { RequestLogTaps } from './upstream-logs.ts';
import { withoutStackTraces } from '../lib/without-stack-traces.ts';

/** The lists a request's server shows its caller: all the registry a server reads (an upstream's view narrows exactly these). */
export type ServerRegistry = Pick<Registry, 'visible' | 'resources'>;

/** Of the tools the registry shows a caller, those the policy in force lets it call (main/core/policy/policy-listing.ts). */
export type ServerListing = Pick<PolicyListing, 'listed'>;

/** The calls a request's server makes: tools, resources, the plugin surfaces (prompts, passed-through resources, templates). */
export interface ServerPipeline extends Pick<Pipeline, 'call' | 'readResource' | 'auditRefusedState'> {
  surfaces: ServerSurfaces;
}

/**
 * What one request's server needs, by role and no more, so a view that
 * narrows it (upstream-view.ts) is checked by the compiler: a method the
 * server starts to use must be given by every view too.
 */
export interface ServerDeps {
  registry: ServerRegistry;
  /** tools/list asks the policy's `call` of what the registry shows: one rule for what is listed and what may be called */
  listing: ServerListing;
  pipeline: ServerPipeline;
  settings: () => Settings;
  /** the operating manual for this caller (what it says about approving depends on what the caller may do) */
  instructions: (ctx: CallContext) => string;
  /** staged writes as MCP tasks and their approval links (docs/tasks.md); absent: plain pending_approval answers only */
  tasks?: TaskDeps;
  /** the 2025 era's resource subscriptions per token (list-changed.ts); absent: resources/subscribe is not offered */
  subscriptions?: TokenSubscriptions;
  /** upstreams' log messages (docs/upstreams.md, "Logs"): a token's level (2025 era), a 2026-07-28 request's taps */
  logs?: {
    setLevel(tokenId: string, level: LogLevel): void;
    taps: RequestLogTaps;
    /** a token's 2025 channel for them: whether it has a GET stream open, and the level it set */
    channelOf(tokenId: string): { open: boolean; level: LogLevel | undefined };
  };
}

/** Where a write tool's own output schema is listed (the shape of its result once applied); see listedTool. */
export const OUTPUT_SCHEMA_META_KEY = 'gatehouse/outputSchema';

/**
 * What tools/list shows of a tool, built once per registration (a changed tool is a new entry).
 *
 * A write is listed with no `outputSchema`: its answer to tools/call is never
 * its own result but a staging receipt (`pending_approval`), or, when the
 * policy runs it without approval, the applied receipt wrapping the result.
 * Clients that validate (the SDKs, the Inspector) check structuredContent
 * against a listed schema and would fail every such call. The tool's own
 * schema is kept in `_meta["gatehouse/outputSchema"]`: the shape of the
 * result a task completes with and `staged_writes_status` shows
 * (docs/upstreams.md, "Output schemas").
 */
const listings = new WeakMap<RegisteredTool, Record<string, unknown>>();
export function listedTool(entry: RegisteredTool): Record<string, unknown> {
  let listed = listings.get(entry);
  if (!listed) {
    const t = entry.tool;
    const output = entry.output?.json;
    // An upstream's tool is listed with its own title and annotations as sent; a built-in's title has one source,
    // the tool's own, and its hints default from `write`.
    const own = t.listed;
    listed = {
      name: t.name,
      ...(own ? (own.title !== undefined ? { title: own.title } : {}) : { title: t.title }),
      description: t.description,
      inputSchema: entry.input.json,
      ...(output && !t.write ? { outputSchema: output } : {}),
      ...(own
        ? own.annotations !== undefined
          ? { annotations: own.annotations }
          : {}
        : { annotations: { readOnlyHint: !t.write, ...t.annotations, title: t.title } }),
      // Task support as the source sent it; Gatehouse advertises no 2025 `tasks` capability, so a 2025 client calls it
      // plainly and the gateway runs the upstream's task (connection.ts), as the 2025-11-25 revision has clients do.
      ...(own?.execution !== undefined ? { execution: own.execution } : {}),
      // The source's own `_meta` (an MCP App's `ui`), Gatehouse's one key beside it: whether a call is staged for a
      // person (the upstream's annotations are its own, so they cannot say). Which plugin and feature a tool is from
      // cost bytes in every listing and no client reads them: discover_tools and the admin API say so.
      _meta: {
        ...own?._meta,
        'gatehouse/write': t.write,
        ...(output && t.write ? { [OUTPUT_SCHEMA_META_KEY]: output } : {}),
      },
    };
    listings.set(entry, listed);
  }
  return listed;
}

/** tools/list answers made once per visible tool set (list-cache.ts). */
const toolLists = new ToolListCache(listedTool);

/** A progress sink when the client sent a progressToken: what a tool (an upstream's) reports goes to it as notifications/progress. */
function progressOf(req: {
  _meta?: { progressToken?: string | number };
  notify: (n: { method: 'notifications/progress'; params: Record<string, unknown> }) => Promise<void>;
}): { sink: Pick<CallContext, 'progress'>; flush: () => Promise<unknown> } {
  const token = req._meta?.progressToken;
  if (token === undefined) return { sink: {}, flush: async () => undefined };
  let last: Promise<unknown> = Promise.resolve();
  return {
    sink: {
      progress: (p) =>
        void (last = req
          .notify({ method: 'notifications/progress', params: { progressToken: token, ...p } })
          .catch(() => undefined)),
    },
    flush: () => last,
  };
}

/** Where logging/setLevel's answer says which upstreams were sent the level (and which have no logging). */
export const LOGGING_META_KEY = 'gatehouse/logging';

/** Where a tool's error result carries its machine-readable error (code, message, details). */
export const TOOL_ERROR_META_KEY = 'gatehouse/error';

/**
 * A tool result with `isError: true`. It carries no `structuredContent`: a
 * tool's `outputSchema` describes its results, and `{error}` would break it
 * (`pages_get` requires `page`). The words are in `content`; the code and its
 * details in `_meta["gatehouse/error"]`, the same for every tool.
 */
const toolError = (code: string, message: string, extra: Record<string, unknown> = {}) => ({
  content: [{ type: 'text' as const, text: `${code}: ${message}` }],
  _meta: { [TOOL_ERROR_META_KEY]: { ...extra, code, message } },
  isError: true,
});

/** Who answers: the server's identity in `initialize`, in 2026-07-28 results' `_meta`, and in a listen stream's closing result. */
export const SERVER_INFO = { name: 'gatehouse', title: 'Gatehouse', version: VERSION } as const;

/** Server capabilities: lists change at run time (plugins, settings), and we say so; see capabilitiesFor. */
export const SERVER_CAPABILITIES = {
  tools: { listChanged: true },
  resources: { listChanged: true },
  prompts: { listChanged: true },
  logging: {},
  // upstreams' MCP App views pass through (docs/upstreams.md, "MCP Apps")
  extensions: { [UI_EXTENSION]: {} },
} as const;

/** The capabilities one caller is offered: SERVER_CAPABILITIES, with completions where an upstream it sees completes. */
function capabilitiesFor(offers: SurfaceOffers): Record<string, unknown> {
  return {
    ...SERVER_CAPABILITIES,
    ...(offers.subscribe ? { resources: { ...SERVER_CAPABILITIES.resources, subscribe: true } } : {}),
    ...(offers.completions ? { completions: {} } : {}),
  };
}

type Discover = { _ondiscover(): Record<string, unknown> };

/**
 * Makes `server/discover` name every revision the endpoint serves: the SDK
 * lists only 2026-07-28 there, though the same endpoint serves the 2025 era
 * through `initialize` (protocol-versions.ts). The SDK installs its discover
 * handler after the factory returns, so the answer is changed where the SDK
 * builds it (a private method: test/mcp/protocol-letter.test.ts holds it).
 */
function discoverServedVersions(server: Server): void {
  const s = sdkInternals<Discover>(server);
  const sdk = s._ondiscover.bind(server);
  s._ondiscover = () => ({ ...sdk(), supportedVersions: [...SERVED_PROTOCOL_VERSIONS] });
}

/**
 * A request's instructions composed only if its answer carries them (initialize, server/discover): every request
 * builds a server, and composing the manual and the upstreams' texts for each tools/call was about a third of
 * building one with an upstream (docs/performance.md, "Every figure, one run"). The SDK reads the private field it
 * kept the option in at those two answers only; test/mcp/endpoint-protocol.test.ts and upstream-instructions.test.ts
 * hold both eras to the text.
 */
function instructionsOnAsk(server: Server, compose: () => string | undefined): void {
  let text: string | undefined;
  let composed = false;
  Object.defineProperty(server, '_instructions', {
    get: () => {
      if (!composed) [text, composed] = [compose(), true];
      return text;
    },
    configurable: true,
  });
}

/**
 * The server's close without stack traces. The SDK's Protocol makes a "Connection closed" error at every close, to
 * reject whatever still waits on the server; a per-request server closes once it has answered, when nothing does,
 * and capturing that error's stack was about 0.02 ms of every call in both eras (docs/performance.md). The SDK calls
 * the transport's `onclose` synchronously from its close, so the wrapper covers exactly that error's making.
 */
function closeWithoutStackTraces(server: Server): void {
  const connect = server.connect.bind(server);
  server.connect = async (transport) => {
    await connect(transport);
    const onclose = transport.onclose;
    transport.onclose = () => withoutStackTraces(() => onclose?.());
  };
}

/**
 * One low-level SDK server per request, bound to the caller. The low-level
 * Server (not McpServer) is used because Gatehouse owns validation, gating,
 * staging and audit in its own pipeline, and tools/list is per caller.
 */
export function buildServer(ctx: CallContext, deps: ServerDeps): Server {
  const seen = deps.pipeline.surfaces.offers(ctx);
  // subscriptions need somewhere to deliver their updates (the endpoint's channels)
  const offers = { ...seen, subscribe: seen.subscribe && deps.subscriptions !== undefined };
  const server = new Server(
    { ...SERVER_INFO },
    {
      capabilities: capabilitiesFor(offers),
      requestState: requestStateOptions((reason, tool) => deps.pipeline.auditRefusedState(tool, ctx, reason)),
    },
  );
  discoverServedVersions(server);
  closeWithoutStackTraces(server);
  // Gatehouse's manual, then each upstream's own instructions the caller sees, as a person approved them.
  instructionsOnAsk(server, () =>
    composeInstructions(deps.instructions(ctx), deps.pipeline.surfaces.instructions(ctx)),
  );
  const viewer = viewerOf(ctx);
  serveTasks(server, ctx, deps.tasks);

  server.setRequestHandler('tools/list', async (_request, extra) => {
    const visible = await deps.listing.listed(ctx, deps.registry.visible(viewer, deps.settings()));
    // A tool only a view may call (`visibility: ["app"]`) is listed to hosts that render views, which keep it from
    // the model; a client without the extension has no view to call it from.
    const declared = clientAskOf(extra, ctx.clientCapabilities).clientCapabilities;
    const views = rendersViews(declared);
    // A tool its upstream lists only to clients that can sample or elicit is listed only to those (docs/decisions.md).
    const usable = visible.filter((e) => clientMayUse(e.tool.listed_for, declared));
    return sdkAnswer(toolLists.result(views ? usable : usable.filter((e) => !appOnly(e.tool.listed?._meta))));
  });

  // Gatehouse's own logging: the level filters what it relays to this token, and is sent on to the upstreams the
  // caller sees that declare logging; the answer names them, and those without logging (nothing sent, nothing claimed).
  server.setRequestHandler('logging/setLevel', async (request) => {
    const { level } = request.params;
    if (ctx.token) deps.logs?.setLevel(ctx.token.id, level);
    const sent = await deps.pipeline.surfaces.setLogLevel(level, ctx.token?.id ?? ctx.request_id, ctx);
    // No upstream concerned: the empty result the protocol names (the conformance suite holds it to exactly {}).
    const concerned = sent.sent_to.length + sent.without_logging.length + sent.failed.length > 0;
    return concerned ? { _meta: { [LOGGING_META_KEY]: sent } } : {};
  });

  /**
   * The upstream's log messages on this call's own stream, while it is answered (docs/upstreams.md, "Logs"):
   * 2026-07-28, at the level the call names (none named: none); 2025, at the token's level, only when the token
   * has no GET stream open (which hears them otherwise).
   */
  const tapLogs = (name: string, req: { envelope?: unknown; notify: (n: never) => Promise<void> }): (() => void) => {
    if (!deps.logs) return () => {};
    const envelope = req.envelope as Record<string, unknown> | undefined;
    const channel = envelope === undefined && ctx.token ? deps.logs.channelOf(ctx.token.id) : null;
    const level =
      envelope !== undefined
        ? envelope[LOG_LEVEL_META_KEY]
        : channel?.open === false
          ? (channel.level ?? 'debug')
          : undefined;
    if (!isLogLevel(level)) return () => {};
    const plugin = deps.registry.visible(viewer, deps.settings()).find((e) => e.tool.name === name)?.tool.plugin;
    if (!plugin) return () => {};
    return deps.logs.taps.tap(
      plugin,
      level,
      (params) => void req.notify(sdkNotification({ method: 'notifications/message', params })).catch(() => undefined),
    );
  };

  server.setRequestHandler('tools/call', async (request, extra) => {
    const progress = progressOf(extra.mcpReq);
    const args = request.params.arguments ?? {};
    const untap = tapLogs(request.params.name, extra.mcpReq);
    try {
      // What the client declared and (2025 era) how to ask it mid-call; a retried round's verified answers (request-state.ts).
      const resume = resumeOf(request.params.name, args, extra);
      const call: CallContext = {
        ...ctx,
        ...(extra.mcpReq.signal ? { signal: extra.mcpReq.signal } : {}),
        ...progress.sink,
        ...clientAskOf(extra, ctx.clientCapabilities),
        ...(resume ? { resume } : {}),
      };
      const outcome = await deps.pipeline.call(request.params.name, args, call);
      // Progress sent on the way goes out before the result, never after it.
      await progress.flush();
      if (outcome.kind === 'refused') return toolError(outcome.code, outcome.message, outcome.details);
      const asks = outcome.output.inputRequired;
      if (asks)
        return sdkAnswer(
          inputRequired({
            inputRequests: sdkAnswer(asks.inputRequests),
            requestState: await wrapState(request.params.name, args, asks.requestState, extra),
          }),
        );
      const caps = declaredCapabilities(extra, ctx);
      const task = taskAnswer(outcome.output, caps, deps.tasks, ctx);
      if (task) return sdkAnswer(task);
      const { structured, text, content, sendStructured, meta, error } = withApprovalLink(
        outcome.output,
        caps,
        deps.tasks,
        ctx,
      );
      // The source's own `_meta` as it sent it; Gatehouse's key beside it (an error result's code), never in its place.
      const ownMeta = {
        ...meta,
        ...(error ? { [TOOL_ERROR_META_KEY]: { ...error.details, code: error.code, message: error.message } } : {}),
      };
      return {
        content: sdkAnswer(content ?? [{ type: 'text' as const, text: text ?? JSON.stringify(structured, null, 2) }]),
        ...(sendStructured === false ? {} : { structuredContent: structured }),
        ...(Object.keys(ownMeta).length ? { _meta: ownMeta } : {}),
        ...(error ? { isError: true } : {}),
      };
    } catch (e) {
      // 2026-07-28 names this refusal (-32021, HTTP 400); the 2025 revisions have no such error: a tool error result there.
      const capability = e instanceof GatehouseError ? e.details.capability : undefined;
      if (
        e instanceof GatehouseError &&
        e.code === 'client_capability_missing' &&
        typeof capability === 'string' &&
        extra.mcpReq.envelope !== undefined
      ) {
        const { upstream, asked } = e.details;
        throw missingCapabilityError(e.message, capability.split('.'), ctx, { upstream, asked });
      }
      if (e instanceof GatehouseError && e.code === 'unknown_tool') {
        throw new ProtocolError(JSONRPC_CODES.unknown_tool, e.message, {
          code: 'unknown_tool',
          request_id: ctx.request_id,
        });
      }
      const shape = toErrorShape(e);
      return toolError(shape.code, shape.message, shape.details ?? {});
    } finally {
      untap();
    }
  });

  server.setRequestHandler('resources/list', async () => ({
    resources: deps.registry
      .resources(viewer, deps.settings())
      .map(({ uri, name, title, description, mimeType }) => ({
        uri,
        name,
        mimeType,
        ...(title ? { title } : {}),
        ...(description ? { description } : {}),
      }))
      .concat(sdkAnswer(deps.pipeline.surfaces.resources(ctx))),
  }));

  installSurfaceHandlers(server, ctx, deps.pipeline.surfaces, offers.subscribe ? deps.subscriptions : undefined);

  server.setRequestHandler('resources/read', async (request, extra) => {
    const call: CallContext = extra.mcpReq.signal ? { ...ctx, signal: extra.mcpReq.signal } : ctx;
    const passed = await readSurfaceResource(request.params.uri, call, deps.pipeline.surfaces);
    if (passed) return sdkAnswer(passed);
    try {
      const { resource, text } = await deps.pipeline.readResource(request.params.uri, call);
      return { contents: [{ uri: resource.uri, mimeType: resource.mimeType, text }] };
    } catch (e) {
      const shape = toErrorShape(e);
      // A missing and a hidden resource answer alike, as for tools.
      const code = shape.code === 'not_found' ? JSONRPC_CODES.invalid_params : JSONRPC_CODES.internal_error;
      throw new ProtocolError(code, shape.message, {
        code: shape.code,
        request_id: ctx.request_id,
        ...(shape.code === 'not_found' ? { uri: request.params.uri.slice(0, 300) } : {}),
      });
    }
  });

  return server;
}
