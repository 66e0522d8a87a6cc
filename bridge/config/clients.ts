import { posix, win32 } from 'node:path';
import type { McpClient } from '../../main/contract/client-config.ts';

/**
 * Where each MCP client keeps its server list on disk. The entry shapes live
 * in main/contract/client-config.ts, shared with the console's snippets.
 */

type Env = Record<string, string | undefined>;

const pathFor = (platform: string) => (platform === 'win32' ? win32 : posix);
const appData = (env: Env, home: string) => env.APPDATA || win32.join(home, 'AppData', 'Roaming');
const xdgConfig = (env: Env, home: string) => env.XDG_CONFIG_HOME || posix.join(home, '.config');

/** The per-user settings folder of an app that follows each platform's convention (Claude, Code). */
function appConfigDir(app: string, platform: string, env: Env, home: string): string {
  if (platform === 'win32') return win32.join(appData(env, home), app);
  if (platform === 'darwin') return posix.join(home, 'Library', 'Application Support', app);
  return posix.join(xdgConfig(env, home), app);
}

export const CLIENT_FILES: Record<McpClient, (platform: string, env: Env, home: string) => string> = {
  'claude-desktop': (platform, env, home) =>
    pathFor(platform).join(appConfigDir('Claude', platform, env, home), 'claude_desktop_config.json'),
  cursor: (platform, _env, home) => pathFor(platform).join(home, '.cursor', 'mcp.json'),
  // VS Code's user-profile mcp.json ("MCP: Open User Configuration"): servers under "servers".
  vscode: (platform, env, home) =>
    pathFor(platform).join(appConfigDir('Code', platform, env, home), 'User', 'mcp.json'),
  windsurf: (platform, _env, home) => pathFor(platform).join(home, '.codeium', 'windsurf', 'mcp_config.json'),
  // User-scope servers live in ~/.claude.json; `claude mcp add --scope user` writes the same entry.
  'claude-code': (platform, _env, home) => pathFor(platform).join(home, '.claude.json'),
};
