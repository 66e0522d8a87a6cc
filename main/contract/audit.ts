import { z } from 'zod';

/**
 * Where the audit entry's `client` name came from: this request's own
 * clientInfo, or a guess (the last clientInfo seen with the token, which may
 * have been another process; the User-Agent; the client's address).
 */
export const ClientSource = z.enum(['request', 'remembered', 'user_agent', 'address']);
export type ClientSource = z.infer<typeof ClientSource>;

export const AuditResult = z.enum(['ok', 'error', 'staged', 'confirmed', 'discarded', 'expired', 'denied', 'rate_limited']);
export type AuditResult = z.infer<typeof AuditResult>;

/** DESIGN.md "Audit entry". Never the clear token, never a credential. */
export const AuditEntry = z.object({
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
});
export type AuditEntry = z.infer<typeof AuditEntry>;

export const AuditQuery = z.object({
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
});
export type AuditQuery = z.infer<typeof AuditQuery>;
export type AuditQueryInput = z.input<typeof AuditQuery>;

export const AuditPage = z.object({
  entries: z.array(AuditEntry),
  next_cursor: z.string().nullable(),
});
export type AuditPage = z.infer<typeof AuditPage>;

/** Counters per tool and result, kept beside the settings. */
export const Stats = z.object({
  since: z.string().nullable().default(null),
  tools: z.record(z.string(), z.record(z.string(), z.number().int())).default({}),
  /** calls per hour bucket ("2026-11-22T07") per result, for the usage chart; trimmed to 30 days */
  hourly: z.record(z.string(), z.record(z.string(), z.number().int())).default({}),
});
export type Stats = z.infer<typeof Stats>;

export const AUDIT_CSV_COLUMNS = [
  'id', 'at', 'request_id', 'tool', 'write', 'result', 'error_code', 'source_plugin', 'feature_key', 'site',
  'token_id', 'token_preview', 'user_id', 'target', 'duration_ms', 'client', 'client_source', 'staged_id',
] as const;
