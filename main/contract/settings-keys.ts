/**
 * The settings' names, their kinds and their one-line help, as plain data: `gatehouse settings` reads and checks a
 * value with them without building the contract's schemas. main/contract/settings.ts holds the schema;
 * test/contract/settings-keys.test.ts keeps the two the same.
 */
export const SETTINGS_KEYS = [
  'enabled',
  'rate_limit',
  'trust_proxy_headers',
  'cors',
  'disabled_tools',
  'approval_mode',
  'audit_retention_days',
  'audit_max_mb',
] as const;
export type SettingsKey = (typeof SETTINGS_KEYS)[number];

/** How a setting's value is written on the command line (`list`: comma-separated). */
export type SettingKind = 'boolean' | 'number' | 'list' | 'text';
export const SETTING_KINDS: Record<SettingsKey, SettingKind> = {
  enabled: 'boolean',
  rate_limit: 'number',
  trust_proxy_headers: 'boolean',
  cors: 'list',
  disabled_tools: 'list',
  approval_mode: 'text',
  audit_retention_days: 'number',
  audit_max_mb: 'number',
};

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
