import { viewerOf, type RegisteredTool, type Viewer } from '../core/calls/registry.ts';
import type { Settings } from '../contract/settings.ts';
import { NAMESPACE_SEPARATOR } from '../contract/upstreams.ts';
import { GatehouseError } from '../core/errors.ts';
import { CONFIRM_TOOL } from '../plugins/builtin/manual.ts';
import type { ServerDeps, ServerListing, ServerPipeline, ServerRegistry } from './server-factory.ts';
import type { ServerSurfaces } from './surface-handlers.ts';

/**
 * One upstream's own MCP endpoint on the service (`.../upstreams/<id>/mcp`,
 * what `gatehouse-bridge --remote URL` relays to): the same server, pipeline
 * and rule as the main endpoint, seen through a narrower window. tools/list
 * shows only that upstream's tools the token may see, under the names the
 * remote gave them (`<id>__` stripped), and Gatehouse's tools for following
 * a staged write up; a call of any other name is the namespaced upstream
 * tool, so nothing outside the window can be reached through it. Everything
 * else (staging, approval, audit, usage, timeouts) is the pipeline's, as on
 * the main endpoint. docs/decisions.md says why a window and not a profile.
 */

/** Gatehouse's own tools an agent needs next to a remote's tools: a staged write's state, and deciding it in `agent` mode. */
export const VIEW_GATEHOUSE_TOOLS: readonly string[] = [
  'staged_writes_status',
  'staged_writes_list',
  CONFIRM_TOOL,
  'staged_writes_discard',
];

/** Renamed entries, one per registered entry, so the server factory's listing cache keeps working; and back, for the policy. */
const renamed = new WeakMap<RegisteredTool, RegisteredTool>();
const originals = new WeakMap<RegisteredTool, RegisteredTool>();
function bareNamed(entry: RegisteredTool, prefix: string): RegisteredTool {
  let out = renamed.get(entry);
  if (!out) {
    out = { ...entry, tool: { ...entry.tool, name: entry.tool.name.slice(prefix.length) } };
    renamed.set(entry, out);
    originals.set(out, entry);
  }
  return out;
}

/** What a view is made from: a server's dependencies whose surfaces can be narrowed to one plugin (SurfaceCalls.only). */
type ViewSource = ServerDeps & {
  pipeline: ServerPipeline & { surfaces: ServerSurfaces & { only(plugin: string): ServerSurfaces } };
};

/**
 * The view's dependencies, each narrowed to the upstream; nothing is passed
 * through unnarrowed (`ServerDeps` names every role the server uses, so a
 * new one fails to compile here until it is narrowed too). Prompts are
 * listed and got under the remote's own names, like its tools; resources keep
 * their `gatehouse-upstream://<id>/` URIs, the ones tool results hand out.
 */
export function upstreamViewDeps(deps: ViewSource, id: string): ServerDeps {
  const prefix = `${id}${NAMESPACE_SEPARATOR}`;
  const own = (viewer: Viewer, settings: Settings) =>
    deps.registry.visible(viewer, settings).filter((e) => e.tool.plugin === id && e.tool.name.startsWith(prefix));
  const visible = (viewer: Viewer, settings: Settings): RegisteredTool[] => {
    const remote = own(viewer, settings).map((e) => bareNamed(e, prefix));
    // The remote's own name wins: the window exists for it (Gatehouse's tools stay on the main endpoint).
    const taken = new Set(remote.map((e) => e.tool.name));
    const ours = deps.registry
      .visible(viewer, settings)
      .filter(
        (e) => e.tool.plugin === 'gatehouse' && VIEW_GATEHOUSE_TOOLS.includes(e.tool.name) && !taken.has(e.tool.name),
      );
    return [...remote, ...ours];
  };
  const fullName = (name: string, viewer: Viewer, settings: Settings) =>
    VIEW_GATEHOUSE_TOOLS.includes(name) && !own(viewer, settings).some((e) => e.tool.name === `${prefix}${name}`)
      ? name
      : `${prefix}${name}`;
  const resources = (viewer: Viewer, settings: Settings) =>
    deps.registry.resources(viewer, settings).filter((r) => r.plugin === id);

  const registry: ServerRegistry = { visible, resources };
  // The policy is asked of the tools as they are registered (`<id>__name`), the names its rules are written for.
  const listing: ServerListing = {
    listed: async (caller, entries) => {
      const asRegistered = entries.map((e) => originals.get(e) ?? e);
      const allowed = new Set(await deps.listing.listed(caller, asRegistered));
      return entries.filter((_, i) => allowed.has(asRegistered[i]!));
    },
  };
  const pipeline: ServerPipeline = {
    call: (name, args, ctx) => deps.pipeline.call(fullName(name, viewerOf(ctx), deps.settings()), args, ctx),
    readResource: async (uri, ctx) => {
      if (!resources(viewerOf(ctx), deps.settings()).some((r) => r.uri === uri)) {
        throw new GatehouseError('not_found', `resource not found: ${uri.slice(0, 300)}`, { uri: uri.slice(0, 300) });
      }
      return deps.pipeline.readResource(uri, ctx);
    },
    auditRefusedState: (name, ctx, reason) =>
      deps.pipeline.auditRefusedState(fullName(name, viewerOf(ctx), deps.settings()), ctx, reason),
    surfaces: viewSurfaces(deps.pipeline.surfaces, id, prefix),
  };
  const instructions = () => viewInstructions(id, deps.settings().approval_mode === 'agent');
  return { ...deps, registry, listing, pipeline, instructions };
}

/** The surfaces of one upstream: its prompts under the remote's names, its resources and templates; another's answer not_found. */
function viewSurfaces(surfaces: ViewSource['pipeline']['surfaces'], id: string, prefix: string): ServerSurfaces {
  const mine = surfaces.only(id);
  return {
    prompts: (ctx) => mine.prompts(ctx).map((p) => ({ ...p, name: p.name.slice(prefix.length) })),
    resources: (ctx) => mine.resources(ctx),
    templates: (ctx) => mine.templates(ctx),
    // every surface URI is the surfaces' to answer (another upstream's: not_found), never a built-in resource's
    ownsUri: (uri) => surfaces.ownsUri(uri),
    readResource: (uri, ctx) => mine.readResource(uri, ctx),
    getPrompt: (name, args, ctx) => mine.getPrompt(`${prefix}${name}`, args, ctx),
    offers: (ctx) => mine.offers(ctx),
    instructions: (ctx) => mine.instructions(ctx),
    setLogLevel: (level, holder, ctx) => mine.setLogLevel(level, holder, ctx),
    subscribe: (uri, holder, ctx) => mine.subscribe(uri, holder, ctx),
    unsubscribe: (uri, holder) => surfaces.unsubscribe(uri, holder),
    complete: (request, ctx) =>
      mine.complete(
        request.ref.type === 'ref/prompt'
          ? { ...request, ref: { ...request.ref, name: `${prefix}${request.ref.name}` } }
          : request,
        ctx,
      ),
  };
}

function viewInstructions(id: string, agentMode: boolean): string {
  return [
    `The tools of the remote MCP server '${id}', relayed by Gatehouse on this computer.`,
    'Reads run at once. A write is staged instead: it answers status "pending_approval" with a staged_id and changes nothing until it is approved, then runs exactly once.',
    agentMode
      ? `Check its preview, then apply it with ${CONFIRM_TOOL} (or drop it with staged_writes_discard); staged_writes_status shows its state and result.`
      : 'A person approves it in Gatehouse (console, tray or CLI); staged_writes_status shows its state and, once applied, its result.',
  ].join('\n');
}
