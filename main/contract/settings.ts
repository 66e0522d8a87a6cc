import { z } from 'zod';

export const ApprovalMode = z.enum(['admin', 'agent']);
export type ApprovalMode = z.infer<typeof ApprovalMode>;

const toolName = z.string().regex(/^[a-zA-Z0-9_.:-]{1,128}$/, 'tool names use letters, digits, _ . : -');
const origin = z
  .string()
  .refine((s) => s === '*' || /^https?:\/\/[^/\s]+$/.test(s), 'an origin is scheme://host[:port] without a path, or *');

/** Gateway settings (docs/console.md and README "Settings"). */
export const Settings = z.object({
  /** Off by default: switch on when a tokened client is to connect. */
  enabled: z.boolean().default(false),
  /**
   * Requests per minute per client (per token); 0 switches the limit off. 1,200 (20 a second): on a desktop the
   * callers are a person's own agents, and an honest burst (an agent exploring its servers, the official
   * conformance suite: ~150 requests in 3 s) must not meet it; a runaway loop still does.
   */
  rate_limit: z.number().int().min(0).max(100_000).default(1200),
  /** When true the client address comes from X-Forwarded-For (its last element). */
  trust_proxy_headers: z.boolean().default(false),
  /** Browser origins allowed to call the MCP endpoint. */
  cors: z.array(origin).default([]),
  /** Tools hidden from every client. */
  disabled_tools: z.array(toolName).default([]),
  /** `admin`: only a person confirms staged writes; `agent`: the token's user may confirm through a tool. */
  approval_mode: ApprovalMode.default('admin'),
  /** Days audit files are kept. */
  audit_retention_days: z.number().int().min(1).max(3650).default(90),
  /** The most the audit files may take in all, in MiB; 0: no cap (only the age limit). */
  audit_max_mb: z.number().int().min(0).max(1_048_576).default(0),
});
export type Settings = z.infer<typeof Settings>;
export const SETTINGS_DEFAULTS: Settings = Settings.parse({});
export type SettingsKey = keyof Settings;
export const SETTINGS_KEYS = Object.keys(Settings.shape) as SettingsKey[];
/** Keys whose CLI value is a comma-separated list. */
export const LIST_SETTINGS: readonly SettingsKey[] = ['cors', 'disabled_tools'];

/** One-line explanations, shown by the CLI and the console's settings screen. */
export const SETTINGS_HELP: Record<SettingsKey, string> = {
  enabled: 'Master switch: when off, every MCP request gets 503 gateway_disabled.',
  rate_limit: 'Requests per minute per client (per token once authenticated); 0 turns the limit off.',
  trust_proxy_headers: 'Take the client address from X-Forwarded-For (its last element); only behind a proxy you run.',
  cors: 'Browser origins allowed to call the MCP endpoint (comma-separated); others get 403.',
  disabled_tools: 'Tools hidden from every client (comma-separated); a hidden tool answers like an unknown one.',
  approval_mode: "admin: only a person approves staged writes; agent: the token's user may confirm through a tool.",
  audit_retention_days: 'How many days of audit files are kept before they are deleted.',
  audit_max_mb:
    'The most the audit files may take in all, in MiB (the oldest files are deleted first, at start and hourly); 0: no cap, only the age limit.',
};

/**
 * A change to some settings. Built from the fields without their defaults:
 * zod fills `.default()`s even inside `.partial()`, which would silently reset
 * every setting the caller did not name.
 */
export const SettingsPatch = z
  .object(
    Object.fromEntries(Object.entries(Settings.shape).map(([k, v]) => [k, (v as z.ZodDefault).unwrap()])) as {
      [K in SettingsKey]: z.ZodType<Settings[K]>;
    },
  )
  .partial()
  .strict();
export type SettingsPatch = z.infer<typeof SettingsPatch>;
