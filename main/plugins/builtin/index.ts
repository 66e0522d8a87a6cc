import type { Settings } from '../../contract/settings.ts';
import type { Plugin, ResourceDef, CallContext } from '../../core/calls/tool.ts';
import { viewerOf, type Registry } from '../../core/calls/registry.ts';
import type { Staging } from '../../core/staging/staging.ts';
import { CONFIRM_TOOL, IDENTITY_URI, MANUAL_URI, operatingManual } from './manual.ts';
import { agentDecisionTools, readTools, stagedReadTools } from './tools.ts';

export { IDENTITY_URI, MANUAL_URI, operatingManual } from './manual.ts';

export interface BuiltinPlugin extends Plugin {
  /** The operating manual for this caller: `instructions` of initialize / server/discover. */
  instructions(ctx: CallContext): string;
}

export interface BuiltinDeps {
  registry: Registry;
  staging: Staging;
  settings: () => Settings;
  /** calls back on every settings change; returns the unsubscribe */
  watchSettings: (listener: (settings: Settings) => void) => () => void;
  siteIdentity: () => Record<string, unknown>;
}

/**
 * Gatehouse's own tools: site identity, discovery and the caller's staged
 * writes. The tools that let an agent decide its own writes exist only in
 * approval mode `agent`: the plugin adds and removes them as the setting
 * changes, so clients get `tools/list_changed`.
 */
export function builtinPlugin(deps: BuiltinDeps): BuiltinPlugin {
  const { registry, staging } = deps;

  const always = [...readTools(deps), ...stagedReadTools(staging)];
  const agentOnly = agentDecisionTools(staging);

  const mayConfirm = (ctx: CallContext) => {
    const tool = registry.get(CONFIRM_TOOL);
    return !!tool && registry.isVisible(tool, viewerOf(ctx), deps.settings());
  };
  const toolsFor = (s: Settings) => (s.approval_mode === 'agent' ? [...always, ...agentOnly] : always);
  const resources: ResourceDef[] = [
    {
      uri: MANUAL_URI,
      name: 'manual',
      title: 'Gatehouse operating manual',
      mimeType: 'text/markdown',
      capability: 'read',
      public: true,
      description: 'How to work through this gateway: read it first.',
      read: async (ctx) => operatingManual(mayConfirm(ctx)),
    },
    {
      uri: IDENTITY_URI,
      name: 'site-identity',
      title: 'Site identity',
      mimeType: 'application/json',
      capability: 'read',
      tool: 'site_identity',
      description: 'The site: name, URL, languages, conventions.',
      read: async () => JSON.stringify(deps.siteIdentity(), null, 2),
    },
  ];
  let unwatch: (() => void) | null = null;

  return {
    id: 'gatehouse',
    title: 'Gatehouse',
    kind: 'builtin',
    instructions: (ctx) => operatingManual(mayConfirm(ctx)),
    tools: () => toolsFor(deps.settings()),
    resources: () => resources,
    async start(host) {
      let mode = deps.settings().approval_mode;
      unwatch = deps.watchSettings((s) => {
        if (s.approval_mode === mode) return;
        mode = s.approval_mode;
        host.setTools(toolsFor(s));
      });
    },
    async stop() {
      unwatch?.();
      unwatch = null;
    },
  };
}
