import { z } from 'zod';
import { lazySchema } from '../../contract/lazy-schema.ts';
import { Capability } from '../../contract/users.ts';
import { StagedStatus, type StagedPayload } from '../../contract/staged.ts';
import type { Tool, CallContext } from '../../core/calls/tool.ts';
import { defineTool } from '../../core/calls/tool.ts';
import { viewerOf, type Registry } from '../../core/calls/registry.ts';
import type { Staging } from '../../core/staging/staging.ts';
import { GatehouseError } from '../../core/errors.ts';
import { CONFIRM_TOOL } from './manual.ts';
import type { Settings } from '../../contract/settings.ts';

// Gatehouse's own tools, in the groups the plugin (index.ts) offers them.

const base = { plugin: 'gatehouse', feature: 'mcp.core' } as const;

const stagedView = (s: StagedPayload) => ({
  staged_id: s.id,
  tool: s.tool,
  status: s.status,
  summary: s.preview.summary,
  created: s.created,
  expires_at: s.expires_at,
  decided_at: s.decided_at,
  error_code: s.error_code,
  ...(s.error_message ? { error_message: s.error_message } : {}),
  ...(s.status === 'confirmed' ? { result: s.result } : {}),
  // A person's word on a write whose outcome was unknown: the agent learns whether it took effect.
  ...(s.settlement ? { settled: { outcome: s.settlement.outcome, was: s.settlement.was, at: s.settlement.at } } : {}),
});

/** The caller's own staged write, or not found (others' writes are not revealed). */
function own(staging: Staging, id: string, ctx: CallContext): StagedPayload {
  const item = staging.get(id);
  if (item.user_id !== ctx.user.id) throw new GatehouseError('staged_not_found', `no staged write '${id}'`);
  return item;
}

/** What the site is and which tools there are. */
export function readTools(deps: {
  registry: Registry;
  settings: () => Settings;
  siteIdentity: () => Record<string, unknown>;
}): Tool[] {
  const { registry } = deps;
  return [
    defineTool({
      ...base,
      name: 'site_identity',
      title: 'Site identity',
      write: false,
      capability: 'read',
      description:
        'Who and what this site is: name, URL, languages, content conventions and what exists. Read this before any site-specific work.',
      input: lazySchema(() => z.object({})),
      annotations: { readOnlyHint: true, idempotentHint: true, openWorldHint: false },
      run: async () => ({ structured: deps.siteIdentity() }),
    }),
    defineTool({
      ...base,
      name: 'discover_tools',
      title: 'Discover tools',
      write: false,
      capability: 'read',
      description:
        'Search the tools this token may use by keyword, plugin or capability. Paginated; use it instead of reading every tool description.',
      input: lazySchema(() =>
        z.object({
          query: z.string().max(200).optional().describe('words to look for in tool names, titles and descriptions'),
          plugin: z.string().max(100).optional().describe('only tools owned by this plugin, e.g. "site"'),
          capability: Capability.optional().describe('only tools that need this capability'),
          write: z.boolean().optional().describe('true: only write (staged) tools; false: only read tools'),
          cursor: z.string().max(20).optional().describe('next_cursor from a previous page'),
          limit: z.number().int().min(1).max(100).default(20).describe('tools per page'),
        }),
      ),
      annotations: { readOnlyHint: true, idempotentHint: true, openWorldHint: false },
      run: async (input, ctx) => {
        const words = (input.query ?? '').toLowerCase().split(/\s+/).filter(Boolean);
        const scored = registry
          .visible(viewerOf(ctx), deps.settings())
          .map((e) => e.tool)
          .filter(
            (t) =>
              (!input.plugin || t.plugin === input.plugin) &&
              (!input.capability || t.capability === input.capability) &&
              (input.write === undefined || t.write === input.write),
          )
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
            tools: page.map(({ t }) => ({
              name: t.name,
              title: t.title,
              description: t.description,
              plugin: t.plugin,
              capability: t.capability,
              write: t.write,
            })),
            next_cursor: next,
          },
        };
      },
    }),
  ];
}

/** The caller's own staged writes, read only. */
export function stagedReadTools(staging: Staging): Tool[] {
  return [
    defineTool({
      ...base,
      name: 'staged_writes_list',
      title: 'My staged writes',
      write: false,
      capability: 'read',
      description: 'Your own staged writes: pending ones first, then recent decisions.',
      input: lazySchema(() => z.object({ status: StagedStatus.optional().describe('only writes in this state') })),
      annotations: { readOnlyHint: true, openWorldHint: false },
      run: async (input, ctx) => ({
        structured: {
          staged: staging
            .list({ user_id: ctx.user.id, ...(input.status ? { status: input.status } : {}) })
            .slice(0, 100)
            .map(stagedView),
        },
      }),
    }),
    defineTool({
      ...base,
      name: 'staged_writes_status',
      title: 'Staged write status',
      write: false,
      capability: 'read',
      description:
        'The state of one of your staged writes (pending, confirmed with its result, discarded, expired or failed; `settled` says what a person found when its outcome was unknown).',
      input: lazySchema(() =>
        z.object({ staged_id: z.string().min(1).max(64).describe('the staged_id a write tool returned') }),
      ),
      annotations: { readOnlyHint: true, openWorldHint: false },
      run: async (input, ctx) => ({ structured: stagedView(own(staging, input.staged_id, ctx)) }),
    }),
  ];
}

/** Deciding one's own staged writes: only in approval mode `agent`. */
export function agentDecisionTools(staging: Staging): Tool[] {
  return [
    defineTool({
      ...base,
      name: CONFIRM_TOOL,
      title: 'Confirm my staged write',
      write: false,
      capability: 'read',
      decides_staged: true,
      description:
        'Apply one of your own staged writes (approval mode "agent" only). Check its preview first. A second confirm returns the first result.',
      input: lazySchema(() => z.object({ staged_id: z.string().min(1).max(64).describe('the staged_id to apply') })),
      annotations: { readOnlyHint: false, destructiveHint: true, idempotentHint: true, openWorldHint: false },
      run: async (input, ctx) => {
        if (ctx.token?.scope.read_only) throw new GatehouseError('forbidden', 'this token is read-only');
        own(staging, input.staged_id, ctx);
        return { structured: stagedView(await staging.confirm(input.staged_id, { kind: 'agent', ctx })) };
      },
    }),
    defineTool({
      ...base,
      name: 'staged_writes_discard',
      title: 'Discard my staged write',
      write: false,
      capability: 'read',
      decides_staged: true,
      description: 'Drop one of your own pending staged writes (approval mode "agent" only).',
      input: lazySchema(() => z.object({ staged_id: z.string().min(1).max(64).describe('the staged_id to drop') })),
      annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: true, openWorldHint: false },
      run: async (input, ctx) => {
        own(staging, input.staged_id, ctx);
        return { structured: stagedView(await staging.discard(input.staged_id, { kind: 'agent', ctx })) };
      },
    }),
  ];
}
