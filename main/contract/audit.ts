import { z } from 'zod';
import { Principal } from './principal.ts';
import { principalLabel } from './principal-label.ts';
import { lazySchema } from './lazy-schema.ts';

/**
 * Where the audit entry's `client` name came from: this request's own
 * clientInfo, or a guess (the last clientInfo seen with the token, which may
 * have been another process; the User-Agent; the client's address).
 */
export const ClientSource = lazySchema(() => z.enum(['request', 'remembered', 'user_agent', 'address']));
export type ClientSource = z.infer<typeof ClientSource>;

export const AuditResult = lazySchema(() =>
  z.enum(['ok', 'error', 'staged', 'confirmed', 'discarded', 'expired', 'denied', 'rate_limited']),
);
export type AuditResult = z.infer<typeof AuditResult>;

/** docs/mcp.md "What is audited". Never the clear token, never a credential. */
export const AuditEntry = lazySchema(() =>
  z.object({
    id: z.string(),
    at: z.string(),
    request_id: z.string().nullable(),
    tool: z.string(),
    write: z.boolean(),
    result: AuditResult,
    error_code: z.string().nullable(),
    source_plugin: z.string().nullable(),
    feature_key: z.string().nullable(),
    site: z.string().nullable(),
    token_id: z.string().nullable(),
    token_preview: z.string().nullable(),
    user_id: z.string().nullable(),
    target: z.string().nullable(),
    duration_ms: z.number().nonnegative(),
    client: z.string().nullable(),
    client_source: ClientSource.nullable().optional(),
    /** staged id for staged/confirmed/discarded/expired transitions */
    staged_id: z.string().nullable().optional(),
    /** who acted, through which surface (absent in lines written before principals existed) */
    principal: Principal.nullable().optional(),
    /** an upstream call's arguments as their shape only (names and types, never values), e.g. `{path:string,lines:[number]}` */
    args_shape: z.string().nullable().optional(),
    /** what an upstream asked of the client during the call, passed through (methods and modes, e.g. `elicitation/create:form`; never values) */
    asked: z.string().nullable().optional(),
    /**
     * An MCP App's tool: its view, as clients name it (`ui://<upstream>/...`). `only`: the tool is visible to views
     * alone (`visibility: ["app"]`), so the call came from that view; otherwise the model or the view may have made it
     * (nothing on the wire tells them apart).
     */
    view: z
      .object({ uri: z.string().max(300), only: z.boolean() })
      .nullable()
      .optional(),
    /** the ids of the tool-call policies that made the decision: the forbids of a refusal, the permits of a write run without approval */
    policy: z.array(z.string().max(100)).max(20).nullable().optional(),
    /** a staged write's decision: the sha256 hashes it was bound to (its arguments, its preview, an upstream tool's pinned definition) */
    binding: z
      .object({
        args: z.string(),
        preview: z.string().nullable(),
        definition: z.string().nullable(),
        /** an upstream write's target as its preview read it (docs/staging.md, "What an upstream write changes") */
        target: z.string().nullable().optional(),
        /** the same target read again once the write was applied (a confirmed entry only, where the recipe can read it) */
        target_after: z.string().nullable().optional(),
      })
      .nullable()
      .optional(),
    /** why a refusal was made, in words, where the error code alone does not say (e.g. a requestState issued to another token); never the refused values */
    reason: z.string().max(300).nullable().optional(),
  }),
);
export type AuditEntry = z.infer<typeof AuditEntry>;

export const AuditQuery = lazySchema(() =>
  z
    .object({
      tool: z.string().optional(),
      result: AuditResult.optional(),
      user_id: z.string().optional(),
      token_id: z.string().optional(),
      plugin: z.string().optional(),
      /** ISO time, inclusive */
      from: z.string().optional(),
      /** ISO time, exclusive */
      to: z.string().optional(),
      limit: z.number().int().min(1).max(1000).default(50),
      /** opaque cursor from a previous page */
      cursor: z.string().optional(),
    })
    .strict(),
);
export type AuditQuery = z.infer<typeof AuditQuery>;
export type AuditQueryInput = z.input<typeof AuditQuery>;

/** `audit.export`: the query's filters (no paging) and a file format. */
export const AuditExportQuery = lazySchema(() =>
  AuditQuery.omit({ limit: true, cursor: true }).extend({
    format: z.enum(['csv', 'jsonl']).default('csv'),
  }),
);
export type AuditExportQuery = z.infer<typeof AuditExportQuery>;

export const AuditPage = lazySchema(() =>
  z.object({
    entries: z.array(AuditEntry),
    next_cursor: z.string().nullable(),
  }),
);
export type AuditPage = z.infer<typeof AuditPage>;

/**
 * Calls to tools that do not exist (or are hidden from the caller) are counted
 * under this one name: statistics never keep a name a client made up.
 */
export const UNKNOWN_TOOL = '(unknown tool)';
/** Resource reads are audited and counted under this name. */
export const RESOURCE_READ = 'resources/read';
/** Prompt gets (an upstream's prompts) are audited and counted under this name, the prompt in `target`. */
export const PROMPT_GET = 'prompts/get';
/** Requests the MCP endpoint refused before any tool was involved (401, 403, 413, 429, gateway off, malformed). */
export const HTTP_REFUSAL = '(http refusal)';

/** Totals of one usage event name and feature (see UsageEvent). */
export const UsageTotals = lazySchema(() =>
  z.object({
    events: z.number().int().nonnegative().default(0),
    units: z.number().int().nonnegative().default(0),
    tokens_input: z.number().int().nonnegative().default(0),
    tokens_output: z.number().int().nonnegative().default(0),
  }),
);
export type UsageTotals = z.infer<typeof UsageTotals>;

/** Counters per tool and result, kept beside the settings. */
export const Stats = lazySchema(() =>
  z.object({
    since: z.string().nullable().default(null),
    tools: z.record(z.string(), z.record(z.string(), z.number().int())).default({}),
    /** calls per hour bucket ("2026-11-22T07") per result, for the usage chart; trimmed to 30 days */
    hourly: z.record(z.string(), z.record(z.string(), z.number().int())).default({}),
    /** usage events (tool calls, confirmed writes, AI tokens) per event name, then per feature */
    usage: z.record(z.string(), z.record(z.string(), UsageTotals)).default({}),
  }),
);
export type Stats = z.infer<typeof Stats>;

export const AUDIT_CSV_COLUMNS = [
  'id',
  'at',
  'request_id',
  'tool',
  'write',
  'result',
  'error_code',
  'source_plugin',
  'feature_key',
  'site',
  'token_id',
  'token_preview',
  'user_id',
  'target',
  'duration_ms',
  'client',
  'client_source',
  'staged_id',
  'principal',
  'args_shape',
  'binding',
  'reason',
] as const;

/** A CSV cell's plain value for a column: the principal as its one-line label, everything else as stored. */
export function auditCsvValue(e: AuditEntry, column: (typeof AUDIT_CSV_COLUMNS)[number]): unknown {
  if (column === 'binding')
    return e.binding
      ? `args=${e.binding.args} preview=${e.binding.preview ?? '-'} definition=${e.binding.definition ?? '-'}${e.binding.target ? ` target=${e.binding.target}` : ''}${e.binding.target_after ? ` target_after=${e.binding.target_after}` : ''}`
      : null;
  return column === 'principal' ? (e.principal ? principalLabel(e.principal) : null) : e[column];
}
