import type { Settings } from '../../contract/settings.ts';
import type { PluginInfo, ToolInfo } from '../../contract/tools.ts';
import { Capability } from '../../contract/users.ts';
import type { TokenScope } from '../../contract/tokens.ts';
import type { CallContext, Plugin, PluginHost, ResourceDef, Tool } from './tool.ts';
import { isUnbuiltSchema } from '../../contract/lazy-schema.ts';
import {
  compileSchema,
  isStandardSchema,
  type CompiledSchema,
  type JsonSchemaCompiler,
  type ToolSchema,
} from './tool-schema.ts';
import { GatehouseError } from '../errors.ts';
import { isObjectMemberName } from '../safe-record.ts';
import type { PluginSurface } from './tool.ts';

/** What the registry needs of a profile (main/contract/profiles.ts). */
export interface ProfileSet {
  readonly tools: readonly string[];
  readonly upstreams: readonly string[];
}

/** Who is asking, as far as visibility goes. */
export interface Viewer {
  capabilities: ReadonlySet<Capability>;
  scope: TokenScope | null;
}

export const viewerOf = (ctx: CallContext): Viewer => ({
  capabilities: ctx.capabilities,
  scope: ctx.token?.scope ?? null,
});

/**
 * Revisions are counted for the whole process, not per registry: a listing
 * kept by its entries' revisions (main/mcp/list-cache.ts) must never be
 * another registry's (two services in one process, as tests run them).
 */
let revisions = 0;

/** A tool as the registry keeps it: its schemas compiled once, and a revision that changes with every (re)registration. */
export interface RegisteredTool {
  readonly tool: Tool;
  readonly pluginKind: Plugin['kind'];
  readonly input: CompiledSchema;
  readonly output: CompiledSchema | null;
  readonly revision: number;
}

/** One change event: what a plugin's tool set gained, lost or replaced. */
export interface RegistryChange {
  plugin: string;
  added: string[];
  removed: string[];
  changed: string[];
  resources: boolean;
  /** the plugin's surface (prompts, passed-through resources) may have changed */
  surface?: boolean;
}

/** The MCP tool name rule (SEP-986): 1-128 of A-Z a-z 0-9 _ - . */
export const TOOL_NAME = /^[A-Za-z0-9_.-]{1,128}$/;
// A set, not the zod enum's parse: registering 5,000 upstream tools asked zod 5,000 times at every start.
const CAPABILITIES: ReadonlySet<unknown> = new Set(Capability.options);
const PLUGIN_ID = /^[a-z0-9][a-z0-9_.-]{0,63}$/;

interface Slot {
  plugin: Plugin;
  tools: Map<string, RegisteredTool>;
  resources: readonly ResourceDef[];
  startError: string | null;
}

/**
 * All tools from all plugins, indexed by name, and the one rule that decides
 * which of them a caller may see and call: the user's capabilities, the
 * token's narrowing and the `disabled_tools` setting. A tool outside that rule
 * does not exist for the caller (tools/list omits it; calling it answers like
 * an unknown tool). Plugins change their tools while running through the host
 * handed to `start`; every change is one event for `onChange` listeners.
 */
export class Registry {
  private readonly slots = new Map<string, Slot>();
  private readonly byName = new Map<string, RegisteredTool>();
  private ordered: readonly RegisteredTool[] | null = null;
  private readonly listeners = new Set<(change: RegistryChange) => void>();
  /**
   * Compiled schemas by the (frozen) JSON Schema object they come from: an upstream's tool is checked
   * (toolProblem), then registered, then offered again after every listing that changed nothing, each time as a
   * new Tool over the same stored, frozen definition; compiling it once is what keeps a start with thousands of
   * upstream tools short. Frozen objects only: one that can still change is compiled each time.
   */
  private readonly compiled = {
    input: new WeakMap<object, CompiledSchema>(),
    output: new WeakMap<object, CompiledSchema>(),
  };
  private stopping: AbortController | null = null;
  /** the tool set of a token's profile; none until the composition root hands the profiles over, and a token's unknown profile leaves it nothing */
  private profileOf: (name: string) => ProfileSet | undefined = () => undefined;

  constructor(private readonly compileJson: JsonSchemaCompiler) {}

  /** Where tokens' profiles are looked up, at every check: a changed profile applies to its tokens' next request. */
  useProfiles(lookup: (name: string) => ProfileSet | undefined): void {
    this.profileOf = lookup;
  }

  /** Registers a plugin and the tools it starts with; a duplicate tool name or plugin id is refused, and nothing of it is kept. */
  add(plugin: Plugin): void {
    if (!PLUGIN_ID.test(plugin.id))
      throw new GatehouseError(
        'invalid_value',
        `plugin id '${plugin.id.slice(0, 80)}' must be 1-64 of a-z 0-9 _ . - starting with a letter or digit`,
      );
    if (this.slots.has(plugin.id)) throw new GatehouseError('conflict', `plugin '${plugin.id}' registered twice`);
    const slot: Slot = { plugin, tools: new Map(), resources: [], startError: null };
    const tools = this.prepareAll(slot, plugin.tools?.() ?? []);
    const resources = this.checkResources(slot, plugin.resources?.() ?? []);
    this.slots.set(plugin.id, slot);
    this.apply(slot, tools, resources);
  }

  /** Calls every plugin's `start` with its host; a plugin that fails to start is reported down, the others run. */
  async start(onError: (pluginId: string, error: unknown) => void = () => {}): Promise<void> {
    this.stopping ??= new AbortController();
    const signal = this.stopping.signal;
    await Promise.all(
      [...this.slots.values()].map(async (slot) => {
        try {
          await slot.plugin.start?.(this.hostFor(slot), signal);
        } catch (e) {
          slot.startError = e instanceof Error ? e.message : String(e);
          onError(slot.plugin.id, e);
        }
      }),
    );
  }

  /**
   * Registers a plugin while the service runs (an upstream a person just
   * added) and starts it as `start` would have; a plugin whose start fails is
   * reported down like one that failed at start.
   */
  async addRunning(plugin: Plugin, onError: (pluginId: string, error: unknown) => void = () => {}): Promise<void> {
    this.add(plugin);
    if (!this.stopping || this.stopping.signal.aborted) return;
    const slot = this.slots.get(plugin.id)!;
    try {
      await plugin.start?.(this.hostFor(slot), this.stopping.signal);
    } catch (e) {
      slot.startError = e instanceof Error ? e.message : String(e);
      onError(plugin.id, e);
    }
  }

  /** Stops a plugin and drops it with its tools and resources (one change event); false when there was none. */
  async remove(pluginId: string): Promise<boolean> {
    const slot = this.slots.get(pluginId);
    if (!slot) return false;
    try {
      await slot.plugin.stop?.();
    } finally {
      this.apply(slot, [], []);
      this.slots.delete(pluginId);
      this.ordered = null;
    }
    return true;
  }

  /** Aborts the plugins' signal and calls every `stop`, last registered first. */
  async stop(onError: (pluginId: string, error: unknown) => void = () => {}): Promise<void> {
    this.stopping?.abort();
    for (const slot of [...this.slots.values()].reverse()) {
      try {
        await slot.plugin.stop?.();
      } catch (e) {
        onError(slot.plugin.id, e);
      }
    }
  }

  onChange(listener: (change: RegistryChange) => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  listPlugins(): Plugin[] {
    return [...this.slots.values()].map((s) => s.plugin);
  }

  plugins(): PluginInfo[] {
    return [...this.slots.values()].map(({ plugin, tools, startError }) => {
      const s = startError
        ? { status: 'down' as const, detail: `failed to start: ${startError}` }
        : (plugin.status?.() ?? { status: 'ok' as const, detail: null });
      return {
        id: plugin.id,
        title: plugin.title,
        kind: plugin.kind,
        status: s.status,
        detail: s.detail,
        tools: tools.size,
      };
    });
  }

  /** Every tool, in registration order; the same array until something changes. */
  all(): readonly RegisteredTool[] {
    this.ordered ??= [...this.slots.values()].flatMap((s) => [...s.tools.values()]);
    return this.ordered;
  }

  get(name: string): Tool | undefined {
    return this.byName.get(name)?.tool;
  }

  entry(name: string): RegisteredTool | undefined {
    return this.byName.get(name);
  }

  has(name: string): boolean {
    return this.byName.has(name);
  }

  isVisible(tool: Tool, viewer: Viewer, settings: Settings): boolean {
    if (!viewer.capabilities.has(tool.capability)) return false;
    if (settings.disabled_tools.includes(tool.name)) return false;
    const scope = viewer.scope;
    if (scope) {
      if (scope.read_only && tool.write) return false;
      if (scope.tools && !scope.tools.includes(tool.name)) return false;
      if (scope.plugins && !scope.plugins.includes(tool.plugin)) return false;
      if (scope.profile !== undefined) {
        const profile = this.profileOf(scope.profile);
        if (!profile || !(profile.tools.includes(tool.name) || profile.upstreams.includes(tool.plugin))) return false;
      }
    }
    return true;
  }

  visible(viewer: Viewer, settings: Settings): RegisteredTool[] {
    return this.all().filter((t) => this.isVisible(t.tool, viewer, settings));
  }

  /** The tool, or the same error an unknown tool gets: hidden tools are not revealed. */
  resolve(name: string, viewer: Viewer, settings: Settings): RegisteredTool {
    const entry = this.byName.get(name);
    if (!entry || !this.isVisible(entry.tool, viewer, settings))
      throw new GatehouseError('unknown_tool', `unknown tool: ${name.slice(0, 128)}`);
    return entry;
  }

  /**
   * Resources under the same rule as tools: one tied to a tool is visible
   * exactly when that tool is; one that is not needs the capability, and a
   * token narrowed to named tools or plugins sees none outside them unless
   * the resource is public (documentation that reveals no data).
   */
  resources(viewer: Viewer, settings: Settings): ResourceDef[] {
    const out: ResourceDef[] = [];
    for (const slot of this.slots.values()) {
      for (const r of slot.resources) {
        if (!viewer.capabilities.has(r.capability)) continue;
        if (r.tool !== undefined) {
          const tool = this.byName.get(r.tool)?.tool;
          if (!tool || !this.isVisible(tool, viewer, settings)) continue;
        } else if (
          !r.public &&
          (viewer.scope?.tools ||
            (viewer.scope?.plugins && !viewer.scope.plugins.includes(slot.plugin.id)) ||
            !this.profileAllowsPlugin(viewer.scope, slot.plugin.id))
        ) {
          continue;
        }
        out.push(r);
      }
    }
    return out;
  }

  /**
   * The surfaces (prompts, passed-through resources) a caller sees, by
   * plugin: the rule of a resource tied to no tool, for the plugin as a
   * whole. The capability; not for a token narrowed to named tools; within
   * the token's plugins and its profile's upstreams.
   */
  surfaces(viewer: Viewer): Array<{ plugin: string; kind: Plugin['kind']; surface: PluginSurface }> {
    const out: Array<{ plugin: string; kind: Plugin['kind']; surface: PluginSurface }> = [];
    for (const { plugin } of this.slots.values()) {
      const surface = plugin.surface;
      if (!surface || !viewer.capabilities.has(surface.capability)) continue;
      if (
        viewer.scope?.tools ||
        (viewer.scope?.plugins && !viewer.scope.plugins.includes(plugin.id)) ||
        !this.profileAllowsPlugin(viewer.scope, plugin.id)
      )
        continue;
      out.push({ plugin: plugin.id, kind: plugin.kind, surface });
    }
    return out;
  }

  /** A resource tied to no tool: within a token's profile only when the profile names its plugin. */
  private profileAllowsPlugin(scope: TokenScope | null, plugin: string): boolean {
    if (scope?.profile === undefined) return true;
    return this.profileOf(scope.profile)?.upstreams.includes(plugin) ?? false;
  }

  info(settings: Settings): ToolInfo[] {
    return this.all().map(({ tool: t }) => ({
      name: t.name,
      title: t.title,
      description: t.description,
      plugin: t.plugin,
      capability: t.capability,
      feature: t.feature,
      write: t.write,
      disabled: settings.disabled_tools.includes(t.name),
    }));
  }

  private hostFor(slot: Slot): PluginHost {
    return {
      putTool: (tool) => {
        const [entry] = this.prepareAll(slot, [tool]);
        const next = new Map(slot.tools);
        next.set(entry!.tool.name, entry!);
        this.apply(slot, [...next.values()], slot.resources);
      },
      removeTool: (name) => {
        if (!slot.tools.has(name)) return false;
        const next = new Map(slot.tools);
        next.delete(name);
        this.apply(slot, [...next.values()], slot.resources);
        return true;
      },
      setTools: (tools) => this.apply(slot, this.prepareAll(slot, tools), slot.resources),
      setResources: (resources) => this.apply(slot, [...slot.tools.values()], this.checkResources(slot, resources)),
      surfaceChanged: () => {
        if (this.slots.get(slot.plugin.id) === slot)
          this.emit({ plugin: slot.plugin.id, added: [], removed: [], changed: [], resources: false, surface: true });
      },
    };
  }

  /**
   * Why a plugin's tool could not be registered (its name, its schemas: one its validator cannot compile), or null.
   * A plugin whose tools come from outside (an upstream) offers the others instead of failing whole.
   */
  toolProblem(pluginId: string, tool: Tool): string | null {
    try {
      this.prepare({ id: pluginId } as Plugin, tool);
      return null;
    } catch (e) {
      return e instanceof Error ? e.message : String(e);
    }
  }

  /** Checks and compiles tools for a plugin; throws before anything changes. */
  private prepareAll(slot: Slot, tools: readonly Tool[]): RegisteredTool[] {
    const seen = new Set<string>();
    return tools.map((tool) => {
      const entry = this.prepare(slot.plugin, tool);
      if (seen.has(tool.name))
        throw new GatehouseError('conflict', `plugin '${slot.plugin.id}' lists the tool '${tool.name}' twice`);
      seen.add(tool.name);
      const owner = this.byName.get(tool.name)?.tool.plugin;
      if (owner !== undefined && owner !== slot.plugin.id)
        throw new GatehouseError(
          'conflict',
          `tool '${tool.name}' of plugin '${slot.plugin.id}' is already registered by plugin '${owner}'; tool names are unique across plugins`,
        );
      return entry;
    });
  }

  private prepare(plugin: Plugin, tool: Tool): RegisteredTool {
    const pluginId = plugin.id;
    const name = typeof tool?.name === 'string' ? tool.name : '';
    const bad = (why: string) =>
      new GatehouseError('invalid_value', `tool '${name.slice(0, 128)}' of plugin '${pluginId}': ${why}`);
    if (!TOOL_NAME.test(name)) throw bad('a tool name is 1-128 of A-Z a-z 0-9 _ - .');
    if (isObjectMemberName(name)) throw bad('the name is reserved (a member of every JavaScript object)');
    if (tool.plugin !== pluginId) throw bad(`it names '${String(tool.plugin)}' as its plugin`);
    if (typeof tool.title !== 'string' || !tool.title.trim() || tool.title.length > 200)
      throw bad('a title is 1-200 characters');
    if (typeof tool.description !== 'string') throw bad('a description is required');
    if (!CAPABILITIES.has(tool.capability)) throw bad(`unknown capability '${String(tool.capability)}'`);
    if (
      tool.write
        ? typeof tool.preview !== 'function' || typeof tool.apply !== 'function'
        : typeof tool.run !== 'function'
    ) {
      throw bad(tool.write ? 'a write tool has preview and apply' : 'a read tool has run');
    }
    if (tool.timeout_ms !== undefined && !(Number.isFinite(tool.timeout_ms) && tool.timeout_ms > 0))
      throw bad('timeout_ms is a positive number');
    try {
      const input = this.compile(tool.input, 'input');
      const output = tool.output ? this.compile(tool.output, 'output') : null;
      return { tool, pluginKind: plugin.kind, input, output, revision: ++revisions };
    } catch (e) {
      throw bad(e instanceof Error ? e.message : String(e));
    }
  }

  private compile(schema: ToolSchema, io: 'input' | 'output'): CompiledSchema {
    // A lazy zod schema is not asked anything here: asking would build it (tool-schema.ts compileSchema).
    const keep = !isUnbuiltSchema(schema) && !isStandardSchema(schema) && Object.isFrozen(schema);
    const known = keep ? this.compiled[io].get(schema) : undefined;
    if (known) return known;
    const made = compileSchema(schema, io, this.compileJson);
    if (keep) this.compiled[io].set(schema, made);
    return made;
  }

  /** Resource URIs are unique across plugins, like tool names. */
  private checkResources(slot: Slot, resources: readonly ResourceDef[]): readonly ResourceDef[] {
    const taken = new Map<string, string>();
    for (const other of this.slots.values())
      if (other !== slot) for (const r of other.resources) taken.set(r.uri, other.plugin.id);
    const own = new Set<string>();
    for (const r of resources) {
      if (typeof r.uri !== 'string' || !r.uri || r.uri.length > 2048)
        throw new GatehouseError('invalid_value', `plugin '${slot.plugin.id}' lists a resource without a usable URI`);
      const owner = taken.get(r.uri);
      if (owner !== undefined)
        throw new GatehouseError(
          'conflict',
          `resource '${r.uri}' of plugin '${slot.plugin.id}' is already registered by plugin '${owner}'`,
        );
      if (own.has(r.uri))
        throw new GatehouseError('conflict', `plugin '${slot.plugin.id}' lists the resource '${r.uri}' twice`);
      own.add(r.uri);
    }
    return resources.map((r) => ({ ...r, plugin: slot.plugin.id }));
  }

  /** Swaps a plugin's tool set and resources in, keeps the index in step and tells the listeners. */
  private apply(slot: Slot, tools: readonly RegisteredTool[], resources: readonly ResourceDef[]): void {
    // A removed plugin's host may still be called (a late list change): it changes nothing any more.
    if (this.slots.get(slot.plugin.id) !== slot) return;
    const before = slot.tools;
    const after = new Map(tools.map((t) => [t.tool.name, t]));
    const change: RegistryChange = {
      plugin: slot.plugin.id,
      added: [],
      removed: [],
      changed: [],
      resources: resources !== slot.resources,
    };
    for (const [name, entry] of after) {
      const old = before.get(name);
      if (!old) change.added.push(name);
      else if (old !== entry) change.changed.push(name);
    }
    for (const name of before.keys()) if (!after.has(name)) change.removed.push(name);
    for (const name of change.removed) this.byName.delete(name);
    for (const [name, entry] of after) this.byName.set(name, entry);
    slot.tools = after;
    slot.resources = resources;
    this.ordered = null;
    if (!change.added.length && !change.removed.length && !change.changed.length && !change.resources) return;
    this.emit(change);
  }

  private emit(change: RegistryChange): void {
    for (const l of this.listeners) {
      try {
        l(change);
      } catch {
        // a broken listener must not break the plugin that changed its tools
      }
    }
  }
}
