import { z } from 'zod';
import type { Settings } from '../../contract/settings.ts';
import { Capability } from '../../contract/users.ts';
import { StagedStatus, type StagedPayload } from '../../contract/staged.ts';
import type { Plugin, ResourceDef, Tool, CallContext } from '../../core/tool.ts';
import { defineTool } from '../../core/tool.ts';
import { viewerOf, type Registry } from '../../core/registry.ts';
import type { Staging } from '../../core/staging.ts';
import { GatehouseError } from '../../core/errors.ts';
import { CONFIRM_TOOL, IDENTITY_URI, MANUAL_URI, operatingManual } from './manual.ts';

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

const stagedView = (s: StagedPayload) => ({
  staged_id: s.id,
  tool: s.tool,
  status: s.status,
  summary: s.preview.summary,
  created: s.created,
  expires_at: s.expires_at,
  decided_at: s.decided_at,
  error_code: s.error_code,
  ...(s.status === 'confirmed' ? { result: s.result } : {}),
});

/** The caller's own staged write, or not found (others' writes are not revealed). */
function own(staging: Staging, id: string, ctx: CallContext): StagedPayload {
  const item = staging.get(id);
  if (item.user_id !== ctx.user.id) throw new GatehouseError('staged_not_found', `no staged write '${id}'`);
  return item;
}

/**
 * Gatehouse's own tools: site identity, discovery and the caller's staged
 * writes. The tools that let an agent decide its own writes exist only in
 * approval mode `agent`: the plugin adds and removes them as the setting
 * changes, so clients get `tools/list_changed`.
 */
export function builtinPlugin(deps: BuiltinDeps): BuiltinPlugin {
  const { registry, staging } = deps;
  const base = { plugin: 'gatehouse', feature: 'mcp.core' } as const;

  const always: Tool[] = [
    defineTool({
      ...base, name: 'site_identity', title: 'Site identity', write: false, capability: 'read',
      description: 'Who and what this site is: name, URL, languages, content conventions and what exists. Read this before any site-specific work.',
      input: z.object({}),
      annotations: { readOnlyHint: true, idempotentHint: true, openWorldHint: false },
      run: async () => ({ structured: deps.siteIdentity() }),
    }),
    defineTool({
      ...base, name: 'discover_tools', title: 'Discover tools', write: false, capability: 'read',
      description: 'Search the tools this token may use by keyword, plugin or capability. Paginated; use it instead of reading every tool description.',
      input: z.object({
        query: z.string().max(200).optional().describe('words to look for in tool names, titles and descriptions'),
        plugin: z.string().max(100).optional().describe('only tools owned by this plugin, e.g. "site"'),
        capability: Capability.optional().describe('only tools that need this capability'),
        write: z.boolean().optional().describe('true: only write (staged) tools; false: only read tools'),
        cursor: z.string().max(20).optional().describe('next_cursor from a previous page'),
        limit: z.number().int().min(1).max(100).default(20).describe('tools per page'),
      }),
      annotations: { readOnlyHint: true, idempotentHint: true, openWorldHint: false },
      run: async (input, ctx) => {
        const words = (input.query ?? '').toLowerCase().split(/\s+/).filter(Boolean);
        const scored = registry
          .visible(viewerOf(ctx), deps.settings())
          .map((e) => e.tool)
          .filter((t) => (!input.plugin || t.plugin === input.plugin) && (!input.capability || t.capability === input.capability) && (input.write === undefined || t.write === input.write))
          .map((t) => {
            const name = t.name.toLowerCase();
            const text = `${t.title} ${t.description}`.toLowerCase();
            const score = words.reduce((s, w) => s + (name.includes(w) ? 3 : 0) + (text.includes(w) ? 1 : 0), 0);
            return { t, score };
          })
          .filter(({ score }) => words.length === 0 || score > 0)
          .sort((a, b) => b.score - a.score || a.t.name.localeCompare(b.t.name));
        const start = Number(input.cursor ?? 0) || 0;
        const page = scored.slice(start, start + input.limit);
        const next = start + input.limit < scored.length ? String(start + input.limit) : null;
        return {
          structured: {
            total: scored.length,
            tools: page.map(({ t }) => ({ name: t.name, title: t.title, description: t.description, plugin: t.plugin, capability: t.capability, write: t.write })),
            next_cursor: next,
          },
        };
      },
    }),
    defineTool({
      ...base, name: 'staged_writes_list', title: 'My staged writes', write: false, capability: 'read',
      description: 'Your own staged writes: pending ones first, then recent decisions.',
      input: z.object({ status: StagedStatus.optional().describe('only writes in this state') }),
      annotations: { readOnlyHint: true, openWorldHint: false },
      run: async (input, ctx) => ({ structured: { staged: staging.list({ user_id: ctx.user.id, ...(input.status ? { status: input.status } : {}) }).slice(0, 100).map(stagedView) } }),
    }),
    defineTool({
      ...base, name: 'staged_writes_status', title: 'Staged write status', write: false, capability: 'read',
      description: 'The state of one of your staged writes (pending, confirmed with its result, discarded, expired or failed).',
      input: z.object({ staged_id: z.string().min(1).max(64).describe('the staged_id a write tool returned') }),
      annotations: { readOnlyHint: true, openWorldHint: false },
      run: async (input, ctx) => ({ structured: stagedView(own(staging, input.staged_id, ctx)) }),
    }),
  ];

  const agentOnly: Tool[] = [
    defineTool({
      ...base, name: CONFIRM_TOOL, title: 'Confirm my staged write', write: false, capability: 'read',
      description: 'Apply one of your own staged writes (approval mode "agent" only). Check its preview first. A second confirm returns the first result.',
      input: z.object({ staged_id: z.string().min(1).max(64).describe('the staged_id to apply') }),
      annotations: { readOnlyHint: false, destructiveHint: true, idempotentHint: true, openWorldHint: false },
      run: async (input, ctx) => {
        if (ctx.token?.scope.read_only) throw new GatehouseError('forbidden', 'this token is read-only');
        own(staging, input.staged_id, ctx);
        return { structured: stagedView(await staging.confirm(input.staged_id, { kind: 'agent', ctx })) };
      },
    }),
    defineTool({
      ...base, name: 'staged_writes_discard', title: 'Discard my staged write', write: false, capability: 'read',
      description: 'Drop one of your own pending staged writes (approval mode "agent" only).',
      input: z.object({ staged_id: z.string().min(1).max(64).describe('the staged_id to drop') }),
      annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: true, openWorldHint: false },
      run: async (input, ctx) => {
        own(staging, input.staged_id, ctx);
        return { structured: stagedView(await staging.discard(input.staged_id, { kind: 'agent', ctx })) };
      },
    }),
  ];

  const mayConfirm = (ctx: CallContext) => {
    const tool = registry.get(CONFIRM_TOOL);
    return !!tool && registry.isVisible(tool, viewerOf(ctx), deps.settings());
  };
  const toolsFor = (s: Settings) => (s.approval_mode === 'agent' ? [...always, ...agentOnly] : always);
  const resources: ResourceDef[] = [
    {
      uri: MANUAL_URI, name: 'manual', title: 'Gatehouse operating manual', mimeType: 'text/markdown', capability: 'read', public: true,
      description: 'How to work through this gateway: read it first.',
      read: async (ctx) => operatingManual(mayConfirm(ctx)),
    },
    {
      uri: IDENTITY_URI, name: 'site-identity', title: 'Site identity', mimeType: 'application/json', capability: 'read', tool: 'site_identity',
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
