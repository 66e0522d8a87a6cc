import type { Settings } from '../contract/settings.ts';
import type { ToolInfo } from '../contract/tools.ts';
import type { Capability } from '../contract/users.ts';
import type { TokenScope } from '../contract/tokens.ts';
import type { CallContext, Plugin, ResourceDef, Tool } from './tool.ts';
import { GatehouseError } from './errors.ts';

/** Who is asking, as far as visibility goes. */
export interface Viewer {
  capabilities: ReadonlySet<Capability>;
  scope: TokenScope | null;
}

export const viewerOf = (ctx: CallContext): Viewer => ({ capabilities: ctx.capabilities, scope: ctx.token?.scope ?? null });

/**
 * All tools from all plugins, and the one rule that decides which of them a
 * caller may see and call: the user's capabilities, the token's narrowing and
 * the `disabled_tools` setting. A tool outside that rule does not exist for
 * the caller (tools/list omits it; calling it answers like an unknown tool).
 */
export class Registry {
  private readonly plugins: Plugin[] = [];

  add(plugin: Plugin): void {
    if (this.plugins.some((p) => p.id === plugin.id)) throw new Error(`plugin '${plugin.id}' registered twice`);
    this.plugins.push(plugin);
  }

  listPlugins(): readonly Plugin[] {
    return this.plugins;
  }

  /** Every tool, each once; a later plugin cannot shadow an earlier tool name. */
  all(): Tool[] {
    const seen = new Set<string>();
    const out: Tool[] = [];
    for (const p of this.plugins) {
      for (const t of p.tools()) {
        if (seen.has(t.name)) continue;
        seen.add(t.name);
        out.push(t);
      }
    }
    return out;
  }

  get(name: string): Tool | undefined {
    return this.all().find((t) => t.name === name);
  }

  isVisible(tool: Tool, viewer: Viewer, settings: Settings): boolean {
    if (settings.disabled_tools.includes(tool.name)) return false;
    if (!viewer.capabilities.has(tool.capability)) return false;
    const scope = viewer.scope;
    if (scope) {
      if (scope.read_only && tool.write) return false;
      if (scope.tools && !scope.tools.includes(tool.name)) return false;
      if (scope.plugins && !scope.plugins.includes(tool.plugin)) return false;
    }
    return true;
  }

  visible(viewer: Viewer, settings: Settings): Tool[] {
    return this.all().filter((t) => this.isVisible(t, viewer, settings));
  }

  /** The tool, or the same error an unknown tool gets: hidden tools are not revealed. */
  resolve(name: string, viewer: Viewer, settings: Settings): Tool {
    const tool = this.get(name);
    if (!tool || !this.isVisible(tool, viewer, settings)) throw new GatehouseError('unknown_tool', `unknown tool: ${name}`);
    return tool;
  }

  resources(viewer: Viewer): ResourceDef[] {
    return this.plugins.flatMap((p) => p.resources?.() ?? []).filter((r) => viewer.capabilities.has(r.capability));
  }

  info(settings: Settings): ToolInfo[] {
    return this.all().map((t) => ({
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
}
