import { posix, win32 } from 'node:path';
import type { ClientName } from '../args.ts';

/**
 * Where each MCP client keeps its server list, and the shape of one entry.
 * Every entry starts the bridge as `<absolute node> <absolute script> flags...`
 * with no shell in between, so paths with spaces need no quoting.
 */

/**
 * How a client starts the bridge: absolute node, absolute script, bridge flags.
 * No node options: any V8 flag on the command line cost ~20 ms of every cold
 * start here; the bridge sets the flags it wants at run time (bridge/memory.ts).
 */
export function launchLine(nodePath: string, binPath: string, bridgeArgs: string[]): { command: string; args: string[] } {
  return { command: nodePath, args: [binPath, ...bridgeArgs] };
}

export interface ClientSpec {
  label: string;
  /** The top-level key holding the servers. */
  key: 'mcpServers' | 'servers';
  path(platform: string, env: Record<string, string | undefined>, home: string): string;
  entry(command: string, args: string[]): Record<string, unknown>;
}

const pathFor = (platform: string) => (platform === 'win32' ? win32 : posix);
const appData = (env: Record<string, string | undefined>, home: string) => env.APPDATA || win32.join(home, 'AppData', 'Roaming');
const xdgConfig = (env: Record<string, string | undefined>, home: string) => env.XDG_CONFIG_HOME || posix.join(home, '.config');

/** The per-user settings folder of an app that follows each platform's convention (Claude, Code). */
function appConfigDir(app: string, platform: string, env: Record<string, string | undefined>, home: string): string {
  if (platform === 'win32') return win32.join(appData(env, home), app);
  if (platform === 'darwin') return posix.join(home, 'Library', 'Application Support', app);
  return posix.join(xdgConfig(env, home), app);
}

const plain = (command: string, args: string[]) => ({ command, args });
const typed = (command: string, args: string[]) => ({ type: 'stdio', command, args });

export const CLIENT_SPECS: Record<ClientName, ClientSpec> = {
  'claude-desktop': {
    label: 'Claude Desktop',
    key: 'mcpServers',
    path: (platform, env, home) => pathFor(platform).join(appConfigDir('Claude', platform, env, home), 'claude_desktop_config.json'),
    entry: plain,
  },
  cursor: {
    label: 'Cursor',
    key: 'mcpServers',
    path: (platform, _env, home) => pathFor(platform).join(home, '.cursor', 'mcp.json'),
    entry: plain,
  },
  vscode: {
    // VS Code's user-profile mcp.json ("MCP: Open User Configuration"): servers under "servers".
    label: 'VS Code',
    key: 'servers',
    path: (platform, env, home) => pathFor(platform).join(appConfigDir('Code', platform, env, home), 'User', 'mcp.json'),
    entry: typed,
  },
  windsurf: {
    label: 'Windsurf',
    key: 'mcpServers',
    path: (platform, _env, home) => pathFor(platform).join(home, '.codeium', 'windsurf', 'mcp_config.json'),
    entry: plain,
  },
  'claude-code': {
    // User-scope servers live in ~/.claude.json; `claude mcp add --scope user` writes the same entry.
    label: 'Claude Code',
    key: 'mcpServers',
    path: (platform, _env, home) => pathFor(platform).join(home, '.claude.json'),
    entry: typed,
  },
};

/** `claude mcp add` with arguments quoted for the platform's usual shell. */
export function claudeMcpAddCommand(name: string, command: string, args: string[], platform: string): string {
  const q = platform === 'win32' ? quoteWindows : quotePosix;
  return ['claude', 'mcp', 'add', '--scope', 'user', name, '--', command, ...args].map(q).join(' ');
}

function quotePosix(s: string): string {
  return /^[A-Za-z0-9_\-+=./:@,]+$/.test(s) ? s : `'${s.replace(/'/g, `'\\''`)}'`;
}

function quoteWindows(s: string): string {
  return /^[A-Za-z0-9_\-+=./:\\@,]+$/.test(s) ? s : `"${s.replace(/"/g, '\\"')}"`;
}
