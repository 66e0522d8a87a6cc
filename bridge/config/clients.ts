import type { McpClient } from '../../main/contract/client-config.ts';
import { userConfigFile } from '../../main/contract/client-locations.ts';

/**
 * Where each MCP client keeps its server list on disk: the user-scope file of
 * main/contract/client-locations.ts (one table of paths, shared with
 * `gatehouse clients`). The entry shapes live in main/contract/client-config.ts.
 */

type Env = Record<string, string | undefined>;

export const CLIENT_FILES: Record<McpClient, (platform: string, env: Env, home: string) => string> = Object.fromEntries(
  (['claude-desktop', 'cursor', 'vscode', 'windsurf', 'claude-code'] as const).map((c) => [
    c,
    (platform: string, env: Env, home: string) => userConfigFile(c, { platform, env, home, cwd: home }),
  ]),
) as Record<McpClient, (platform: string, env: Env, home: string) => string>;
