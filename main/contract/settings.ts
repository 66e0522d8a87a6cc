import { z } from 'zod';
import type { SettingsKey } from './settings-keys.ts';
import { lazySchema } from './lazy-schema.ts';

export const ApprovalMode = lazySchema(() => z.enum(['admin', 'agent']));
export type ApprovalMode = z.infer<typeof ApprovalMode>;

const toolName = lazySchema(() =>
  z.string().regex(/^[a-zA-Z0-9_.:-]{1,128}$/, 'tool names use letters, digits, _ . : -'),
);
const origin = lazySchema(() =>
  z
    .string()
    .refine(
      (s) => s === '*' || /^https?:\/\/[^/\s]+$/.test(s),
      'an origin is scheme://host[:port] without a path, or *',
    ),
);

/** Gateway settings (docs/console.md and README "Settings"). */
export const Settings = lazySchema(() =>
  z.object({
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
  }),
);
export type Settings = z.infer<typeof Settings>;
export const SETTINGS_DEFAULTS: Settings = Settings.parse({});
// The names, kinds and help as plain data (main/contract/settings-keys.ts); test/contract/settings-keys.test.ts
// keeps them the schema's.
export { SETTINGS_HELP, SETTINGS_KEYS, type SettingsKey } from './settings-keys.ts';

/**
 * A change to some settings. Built from the fields without their defaults:
 * zod fills `.default()`s even inside `.partial()`, which would silently reset
 * every setting the caller did not name.
 */
export const SettingsPatch = lazySchema(() =>
  z
    .object(
      Object.fromEntries(Object.entries(Settings.shape).map(([k, v]) => [k, (v as z.ZodDefault).unwrap()])) as {
        [K in SettingsKey]: z.ZodType<Settings[K]>;
      },
    )
    .partial()
    .strict(),
);
export type SettingsPatch = z.infer<typeof SettingsPatch>;
