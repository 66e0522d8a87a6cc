import { viewerOf, type Registry, type RegisteredTool, type Viewer } from '../core/calls/registry.ts';
import type { Pipeline } from '../core/calls/pipeline.ts';
import type { CallContext } from '../core/calls/tool.ts';
import type { Settings } from '../contract/settings.ts';
import { NAMESPACE_SEPARATOR } from '../contract/upstreams.ts';
import { GatehouseError } from '../core/errors.ts';
import { CONFIRM_TOOL } from '../plugins/builtin/manual.ts';
import type { ServerDeps } from './server-factory.ts';

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

/** Renamed entries, one per registered entry, so the server factory's listing cache keeps working. */
const renamed = new WeakMap<RegisteredTool, RegisteredTool>();
function bareNamed(entry: RegisteredTool, prefix: string): RegisteredTool {
  let out = renamed.get(entry);
  if (!out) {
    out = { ...entry, tool: { ...entry.tool, name: entry.tool.name.slice(prefix.length) } };
    renamed.set(entry, out);
  }
  return out;
}

export function upstreamViewDeps<D extends ServerDeps>(deps: D, id: string): D {
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

  // Only what the window narrows, nothing passed through: a list the server factory learns to serve
  // later (prompts, templates) fails in the window until it is narrowed here, instead of showing every upstream's.
  const registry = { visible, resources } as Pick<Registry, 'visible' | 'resources'> as Registry;
  const pipeline = {
    call: (name: string, args: unknown, ctx: CallContext) =>
      deps.pipeline.call(fullName(name, viewerOf(ctx), deps.settings()), args, ctx),
    readResource: async (uri: string, ctx: CallContext) => {
      if (!resources(viewerOf(ctx), deps.settings()).some((r) => r.uri === uri)) {
        throw new GatehouseError('not_found', `resource not found: ${uri.slice(0, 300)}`, { uri: uri.slice(0, 300) });
      }
      return deps.pipeline.readResource(uri, ctx);
    },
  } as Pick<Pipeline, 'call' | 'readResource'> as Pipeline;
  const instructions = () => viewInstructions(id, deps.settings().approval_mode === 'agent');
  return { ...deps, registry, pipeline, instructions };
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
