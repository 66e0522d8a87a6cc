import type {
  AppliedState,
  CallContext,
  ClientNeed,
  Tool,
  ToolAnnotations,
  ToolOutput,
  WritePlan,
} from '../../core/calls/tool.ts';
import type { JsonObjectSchema } from '../../core/calls/tool-schema.ts';
import { GatehouseError } from '../../core/errors.ts';
import { maskSecrets } from '../../lib/secret-scan.ts';
import type { UpstreamConnection, UpstreamResult } from './connection.ts';
import type { PinnedTool, ToolDefinition } from './upstream-data.ts';
import { classOf, namespaced } from './pinning.ts';
import { wrapBlockUris } from './surface-names.ts';
import { toolMetaForClients } from './views.ts';
import { recipeFor, recipesOf, type PreviewRecipe } from './preview-recipes.ts';
import { PREVIEW_LIMITS, targetPreview, type ReadCall } from './target-preview.ts';

/** The longest a call may run however much progress it reports (the SDK's per-call timeout, extended by progress, is the usual bound). */
export const UPSTREAM_MAX_TOTAL_MS = 60 * 60 * 1000;
export const UPSTREAM_FEATURE = 'mcp.upstreams';
const HINTS = ['readOnlyHint', 'destructiveHint', 'idempotentHint', 'openWorldHint'] as const;

export interface UpstreamRuntime {
  id: string;
  connection: UpstreamConnection;
  /** runs a call on the connection serving this caller (one process per client: its own); absent, `connection` serves every caller */
  through?<T>(
    ctx: CallContext,
    tool: { name: string; hash: string },
    fn: (c: UpstreamConnection) => Promise<T>,
  ): Promise<T>;
  /** the client capability sets the upstream lists a tool under (its own name), once learned; undefined: listed to every client */
  listedFor?: (tool: string) => ReadonlyArray<ReadonlyArray<ClientNeed>> | undefined;
  /** hears each of the upstream's resource URIs a result hands to a client (the surface lets it be read back) */
  handedOut?: (uri: string) => void;
  /** the upstream's pins now: a write's preview recipe finds its read tools among them (preview-recipes.ts) */
  pins?: () => readonly PinnedTool[];
  /** the person's own preview recipes for this upstream now (theirs take the place of shipped ones) */
  recipes?: () => readonly PreviewRecipe[];
  /** how long each of a preview's reads may take (default PREVIEW_LIMITS.readMs; tests shorten it) */
  previewReadMs?: number;
  /** whether a view (the upstream's own ui:// URI) may be named to clients now: a person approved it (upstream-views.ts) */
  viewServed?: (own: string) => boolean;
}

/**
 * A pinned upstream tool as a Gatehouse tool: reads run through the pipeline
 * (audited with the upstream as source_plugin, counted like built-ins);
 * writes are staged, and their confirm calls the upstream once.
 */
export function toolFor(up: UpstreamRuntime, pin: PinnedTool): Tool {
  const def = pin.approved!.definition;
  const base = {
    name: namespaced(up.id, pin.name),
    title: titleOf(def),
    description: def.description ?? '',
    input: def.inputSchema as JsonObjectSchema,
    ...(def.outputSchema ? { output: def.outputSchema as JsonObjectSchema } : {}),
    capability: 'use_upstreams' as const,
    feature: UPSTREAM_FEATURE,
    plugin: up.id,
    annotations: hintsOf(def),
    timeout_ms: UPSTREAM_MAX_TOTAL_MS,
    // a staged write is bound to the definition a person approved: another one approved since makes it stale
    definition_hash: pin.approved!.hash,
    ...(up.listedFor?.(pin.name) ? { listed_for: up.listedFor(pin.name)! } : {}),
    listed: {
      ...(def.title !== undefined ? { title: def.title } : {}),
      ...(def.annotations !== undefined ? { annotations: def.annotations } : {}),
      ...(def._meta !== undefined
        ? { _meta: toolMetaForClients(up.id, def._meta, (own) => up.viewServed?.(own) ?? false) }
        : {}),
      ...(def.execution !== undefined ? { execution: def.execution } : {}),
    },
  };
  const on = <T>(ctx: CallContext, tool: PinnedTool, fn: (c: UpstreamConnection) => Promise<T>): Promise<T> =>
    up.through ? up.through(ctx, { name: tool.name, hash: tool.approved!.hash }, fn) : fn(up.connection);
  const call = (args: Record<string, unknown>, ctx: CallContext) =>
    on(ctx, pin, (c) =>
      c.call(pin.name, args, {
        ctx,
        maxTotalMs: UPSTREAM_MAX_TOTAL_MS,
        definition: def,
      }),
    );

  const readMs = up.previewReadMs ?? PREVIEW_LIMITS.readMs;
  const matchNow = () => (up.pins ? recipeFor(pin, up.pins(), recipesOf(up.recipes?.() ?? [])) : null);
  // Reads only, on the desk's behalf: no client to ask, no progress to pass on, their own deadline.
  const readsFor =
    (ctx: CallContext): ReadCall =>
    (read, readArgs, signal) =>
      // The preview reads what the write will act on: the same client's process, when each client has its own.
      on(ctx, read, (c) =>
        c.call(read.name, readArgs, {
          ctx: {
            user: ctx.user,
            capabilities: ctx.capabilities,
            token: ctx.token,
            ...(ctx.staged_by_token !== undefined ? { staged_by_token: ctx.staged_by_token } : {}),
            request_id: ctx.request_id,
            client: ctx.client,
            signal,
          },
          maxTotalMs: readMs,
          definition: read.approved!.definition,
        }),
      );
  /** The target's version once the write is applied, read as the preview read it; undefined when it cannot be read. */
  const versionAfter = async (args: Record<string, unknown>, ctx: CallContext): Promise<string | undefined> => {
    const match = matchNow();
    if (!match) return undefined;
    const now = await targetPreview(match, args, readsFor(ctx), ctx.signal, readMs).catch(() => null);
    return now?.current.version ?? undefined;
  };

  if (classOf(pin) === 'read') {
    return {
      ...base,
      write: false,
      run: async (input, ctx) => outputOf(up, pin.name, await call(input as Record<string, unknown>, ctx)),
    };
  }
  return {
    ...base,
    write: true,
    // the preview depends on the arguments and what the recipe's reads show now: a confirm builds it again and compares
    repeatablePreview: true,
    preview: async (input, ctx): Promise<WritePlan> => {
      const args = input as Record<string, unknown>;
      const masked = maskSecrets(args) as Record<string, unknown>;
      const base = {
        summary: summaryOf(up.id, pin.name, masked),
        kind: 'arguments' as const,
        changes: [],
        arguments: { upstream: up.id, tool: pin.name, arguments: masked },
      };
      const match = matchNow();
      const target = match ? await targetPreview(match, args, readsFor(ctx), ctx.signal, readMs) : null;
      return {
        preview: target
          ? {
              ...base,
              kind: target.changes.length ? 'diff' : 'arguments',
              changes: target.changes,
              current: target.current,
            }
          : base,
        payload: args,
        target: `upstream:${up.id}`,
        target_version: null,
      };
    },
    apply: async (payload, ctx) => {
      let r: UpstreamResult;
      try {
        r = await call(payload, ctx);
      } catch (e) {
        // Sent but not answered (the process died, the time ran out): whether it took effect is unknown, and it is never sent again.
        if (
          e instanceof GatehouseError &&
          (e.code === 'timeout' || (e.code === 'upstream_unavailable' && e.message.includes('during the call')))
        ) {
          throw new GatehouseError(
            'outcome_unknown',
            `${e.message}; whether the write took effect upstream is unknown: check ${up.id} yourself (it is not retried)`,
            { upstream: up.id },
          );
        }
        throw e;
      }
      if (r.inputRequired)
        throw new GatehouseError(
          'client_capability_missing',
          `upstream '${up.id}' asks for input (${r.asked}) while a confirmed write is applied, and there is no client to ask then: nothing was done upstream; stage the write again from a client that can answer`,
          { upstream: up.id },
        );
      const out = outputOf(up, pin.name, r, 'throw');
      return {
        ...out,
        structured: {
          content: out.content,
          ...(r.structuredContent ? { structuredContent: r.structuredContent } : {}),
          ...(out.meta ? { _meta: out.meta } : {}),
        },
        // Applied: what the target is now goes to the audit beside what it was (a read that fails leaves it out).
        versionAfter: () => versionAfter(payload, ctx),
      };
    },
    // The upstream cannot be asked whether a call sent before a crash took effect.
    applied: async (): Promise<AppliedState> => ({ state: 'unknown', code: 'outcome_unknown' }),
  };
}

/**
 * The arguments that name what a write acts on, most telling first: the
 * desk's row title shows them (`write_file /w/a.txt on upstream fs`) so
 * writes to one server can be told apart. A pair like move_file's
 * source/destination shows both.
 */
const TARGET_ARGS = [
  ['source', 'destination'],
  ['from', 'to'],
  ['path'],
  ['file_path'],
  ['filepath'],
  ['file'],
  ['filename'],
  ['uri'],
  ['url'],
  ['name'],
  ['title'],
  ['slug'],
  ['repo'],
  ['id'],
] as const;
const TARGET_MAX = 120;

/** What the write acts on, from its (masked) arguments, or null when none of them names it as a short string or number. */
export function namedTarget(args: Record<string, unknown>): string | null {
  const plain = (v: unknown): string | null => {
    if (typeof v === 'number' && Number.isFinite(v)) return String(v);
    if (typeof v !== 'string') return null;
    // one line, no control characters: it is a title
    const t = v.replace(/\p{Cc}+/gu, ' ').trim();
    return t ? (t.length > TARGET_MAX ? `${t.slice(0, TARGET_MAX - 1)}…` : t) : null;
  };
  for (const names of TARGET_ARGS) {
    const values = names.map((n) => (Object.hasOwn(args, n) ? plain(args[n]) : null));
    if (values.every((v) => v !== null)) return values.join(' → ');
  }
  return null;
}

function summaryOf(id: string, tool: string, args: Record<string, unknown>): string {
  const target = namedTarget(args);
  return target ? `${tool} ${target} on upstream ${id}` : `${tool} on upstream ${id}`;
}

function titleOf(def: ToolDefinition): string {
  const t = def.title ?? (typeof def.annotations?.title === 'string' ? def.annotations.title : null) ?? def.name;
  return (t.trim() || def.name).slice(0, 200);
}

function hintsOf(def: ToolDefinition): ToolAnnotations {
  const out: ToolAnnotations = {};
  for (const h of HINTS) if (typeof def.annotations?.[h] === 'boolean') out[h] = def.annotations[h] as boolean;
  return out;
}

/**
 * The upstream's answer as ours: its content blocks with the resource URIs
 * they name wrapped (resource links, embedded resources), so the client can
 * read them back through Gatehouse; its `_meta` as it sent it (resultMeta). An error
 * result is passed on as one, content and structured content as sent, with
 * `upstream_error` beside them; `apply` (a confirmed write, no client to hand it to) throws it instead.
 */
function outputOf(
  up: UpstreamRuntime,
  tool: string,
  r: UpstreamResult,
  onError: 'pass' | 'throw' = 'pass',
): ToolOutput {
  const id = up.id;
  const meta = resultMeta(r._meta);
  const content = r.content.map((b) => wrapBlockUris(id, b, up.handedOut)) as UpstreamResult['content'];
  if (r.isError) {
    const text = r.content
      .map((c) => (typeof c.text === 'string' ? c.text : ''))
      .join('\n')
      .slice(0, 2000);
    const message = `${tool} on upstream ${id} failed: ${text || 'no message'}`;
    if (onError === 'throw') throw new GatehouseError('upstream_error', message, { upstream: id });
    return {
      structured: r.structuredContent ?? {},
      content,
      sendStructured: r.structuredContent !== undefined,
      error: { code: 'upstream_error', message, details: { upstream: id } },
      ...(meta ? { meta } : {}),
    };
  }
  const asked = r.asked ? { asked: r.asked } : {};
  if (r.inputRequired) return { structured: {}, inputRequired: r.inputRequired, ...asked };
  return {
    structured: r.structuredContent ?? {},
    content,
    sendStructured: r.structuredContent !== undefined,
    ...(meta ? { meta } : {}),
    ...asked,
  };
}

/** The protocol's own keys of a result's `_meta` (`io.modelcontextprotocol/...`: the upstream's server info and revision) describe the upstream's hop, not the answer: Gatehouse's SDK sets its own. */
const PROTOCOL_META = 'io.modelcontextprotocol/';

/** The upstream's result `_meta` to hand on (a view's `viewUUID`, its own keys), or undefined when there is none. */
export function resultMeta(meta: unknown): Record<string, unknown> | undefined {
  if (!meta || typeof meta !== 'object' || Array.isArray(meta)) return undefined;
  const kept = Object.entries(meta).filter(([k]) => !k.startsWith(PROTOCOL_META));
  return kept.length ? Object.fromEntries(kept) : undefined;
}
