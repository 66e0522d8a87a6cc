import { z } from 'zod';
import { lazySchema } from './lazy-schema.ts';

/** Seed health report: `{success, gateway:{...}, products:{aeo, code, verto, mcp, pro}}`. */
export const CloudHealth = lazySchema(() =>
  z.object({
    success: z.boolean(),
    gateway: z.object({
      connected: z.boolean(),
      last_sync: z.string().nullable(),
      license: z.string(),
      entitlements: z.string(),
      usage: z.string(),
      cloud_token: z.string(),
    }),
    products: z.object({ aeo: z.string(), code: z.string(), verto: z.string(), mcp: z.string(), pro: z.string() }),
  }),
);
export type CloudHealth = z.infer<typeof CloudHealth>;

export const VaultBackend = lazySchema(() => z.enum(['keychain', 'file']));
export type VaultBackend = z.infer<typeof VaultBackend>;

export const Warning = lazySchema(() => z.object({ code: z.string(), message: z.string() }));
export type Warning = z.infer<typeof Warning>;

/**
 * How an MCP client on this machine starts gatehouse-bridge for this service
 * (absolute node + script, plus its data dir when it is not the default):
 * the console's client snippets use it instead of guessing, with `vault`.
 */
export const BridgeLaunchInfo = lazySchema(() =>
  z.object({ command: z.string(), args: z.array(z.string()), platform: z.string() }),
);
export type BridgeLaunchInfo = z.infer<typeof BridgeLaunchInfo>;

/** What the console's overview and `GET /` show about the local service. */
export const HealthReport = lazySchema(() =>
  z.object({
    name: z.literal('gatehouse'),
    version: z.string(),
    enabled: z.boolean(),
    base_url: z.string(),
    mcp_url: z.string(),
    console_url: z.string(),
    data_dir: z.string(),
    vault: z.object({ backend: VaultBackend, label: z.string() }),
    bridge: BridgeLaunchInfo,
    pending_approvals: z.number().int(),
    recent_clients: z.array(
      z.object({ token_id: z.string(), label: z.string(), client: z.string().nullable(), last_used: z.string() }),
    ),
    cloud: CloudHealth,
    warnings: z.array(Warning),
  }),
);
export type HealthReport = z.infer<typeof HealthReport>;

/** `runtime.json` in the data dir while a service runs. */
export const RuntimeInfo = lazySchema(() =>
  z.object({
    pid: z.number().int(),
    base_url: z.string(),
    mcp_url: z.string(),
    console_url: z.string(),
    admin_url: z.string(),
    version: z.string(),
    started: z.string(),
  }),
);
export type RuntimeInfo = z.infer<typeof RuntimeInfo>;

/** The service's port when none is given (`--port 0` picks a free one). */
export { DEFAULT_PORT } from './default-port.ts';
export const MCP_PATH = '/wp-json/gatehouse-mcp/v1/mcp';
export const REST_PREFIX = '/wp-json/gatehouse/v1';
export const ADMIN_PREFIX = `${REST_PREFIX}/admin`;
export const CONSOLE_PATH = '/console/';
