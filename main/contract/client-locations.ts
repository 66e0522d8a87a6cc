/**
 * Where each MCP client keeps its servers, per OS and scope (docs/clients.md,
 * gathered in shared/reference/client-configs.md). Pure: the caller passes
 * the platform, environment, home and current folder; nothing here touches
 * the disk. The bridge's `config` writer takes its user-scope files from here
 * too (bridge/config/clients.ts), so there is one table of paths.
 */

export const CLIENT_IDS = [
  'claude-desktop',
  'claude-code',
  'cursor',
  'vscode',
  'windsurf',
  'codex',
  'gemini',
  'zed',
] as const;
export type ClientId = (typeof CLIENT_IDS)[number];

export const CLIENT_LABELS: Record<ClientId, string> = {
  'claude-desktop': 'Claude Desktop',
  'claude-code': 'Claude Code',
  cursor: 'Cursor',
  vscode: 'VS Code',
  windsurf: 'Windsurf',
  codex: 'Codex',
  gemini: 'Gemini CLI',
  zed: 'Zed',
};

/** user: the person's own file; local: Claude Code's per-project part of ~/.claude.json; project: a file in the current folder; managed: set by an administrator, read-only to us. */
export type ClientScope = 'user' | 'local' | 'project' | 'managed';
export type ConfigFormat = 'jsonc' | 'toml';

export interface ClientLocation {
  client: ClientId;
  scope: ClientScope;
  file: string;
  format: ConfigFormat;
  /** the keys leading to the object of servers, e.g. ['mcpServers'] or ['projects', '/abs/dir', 'mcpServers'] */
  path: string[];
  readOnly: boolean;
}

export interface PlaceOf {
  platform: string;
  env: Record<string, string | undefined>;
  home: string;
  cwd: string;
  /** prefixed to system-wide files (Claude Code's managed file): tests put them under a temp folder */
  systemRoot?: string;
}

const sepOf = (platform: string) => (platform === 'win32' ? '\\' : '/');
const join = (platform: string, ...parts: string[]) => {
  const sep = sepOf(platform);
  return parts.map((p, i) => (i === 0 ? p.replace(/[\\/]+$/, '') : p.replace(/^[\\/]+|[\\/]+$/g, ''))).join(sep);
};
const appData = (p: PlaceOf) => p.env.APPDATA || join('win32', p.home, 'AppData', 'Roaming');
const xdgConfig = (p: PlaceOf) => p.env.XDG_CONFIG_HOME || join('linux', p.home, '.config');

/** The per-user settings folder of an app that follows each platform's convention (Claude, Code). */
export function appConfigDir(app: string, p: PlaceOf): string {
  if (p.platform === 'win32') return join('win32', appData(p), app);
  if (p.platform === 'darwin') return join('darwin', p.home, 'Library', 'Application Support', app);
  return join(p.platform, xdgConfig(p), app);
}

/** The user-scope file of each client: the bridge's `config --write` puts its entry there. */
export function userConfigFile(client: ClientId, p: PlaceOf): string {
  const j = (...parts: string[]) => join(p.platform, ...parts);
  switch (client) {
    case 'claude-desktop':
      return j(appConfigDir('Claude', p), 'claude_desktop_config.json');
    case 'claude-code':
      return j(p.env.CLAUDE_CONFIG_DIR || p.home, '.claude.json');
    case 'cursor':
      return j(p.home, '.cursor', 'mcp.json');
    case 'vscode':
      return j(appConfigDir('Code', p), 'User', 'mcp.json');
    case 'windsurf':
      return j(p.home, '.codeium', 'windsurf', 'mcp_config.json');
    case 'codex':
      return j(p.env.CODEX_HOME || j(p.home, '.codex'), 'config.toml');
    case 'gemini':
      return j(p.home, '.gemini', 'settings.json');
    case 'zed':
      return p.platform === 'win32' ? j(appData(p), 'Zed', 'settings.json') : j(xdgConfig(p), 'zed', 'settings.json');
  }
}

function managedClaudeCode(platform: string): string {
  if (platform === 'darwin') return '/Library/Application Support/ClaudeCode/managed-mcp.json';
  if (platform === 'win32') return 'C:\\Program Files\\ClaudeCode\\managed-mcp.json';
  return '/etc/claude-code/managed-mcp.json';
}

/** Every place a client may keep servers, user scope first; whether each file exists is the reader's business. */
export function clientLocations(client: ClientId, p: PlaceOf): ClientLocation[] {
  const j = (...parts: string[]) => join(p.platform, ...parts);
  const at = (scope: ClientScope, file: string, path: string[], format: ConfigFormat = 'jsonc'): ClientLocation => ({
    client,
    scope,
    file,
    format,
    path,
    readOnly: scope === 'managed',
  });
  const user = userConfigFile(client, p);
  const list: ClientLocation[] = (() => {
    switch (client) {
      case 'claude-desktop': {
        const files = [user];
        // A Windows MSIX install reads a virtualized copy of %APPDATA%.
        if (p.platform === 'win32' && p.env.LOCALAPPDATA)
          files.push(
            j(
              p.env.LOCALAPPDATA,
              'Packages',
              'Claude_pzs8sxrjxfjjc',
              'LocalCache',
              'Roaming',
              'Claude',
              'claude_desktop_config.json',
            ),
          );
        return files.map((f) => at('user', f, ['mcpServers']));
      }
      case 'claude-code':
        return [
          at('user', user, ['mcpServers']),
          at('local', user, ['projects', p.cwd, 'mcpServers']),
          at('project', j(p.cwd, '.mcp.json'), ['mcpServers']),
          at('managed', (p.systemRoot ?? '') + managedClaudeCode(p.platform), ['mcpServers']),
        ];
      case 'cursor':
        return [at('user', user, ['mcpServers']), at('project', j(p.cwd, '.cursor', 'mcp.json'), ['mcpServers'])];
      case 'vscode':
        return [
          at('user', user, ['servers']),
          at('user', j(appConfigDir('Code - Insiders', p), 'User', 'mcp.json'), ['servers']),
          at('project', j(p.cwd, '.vscode', 'mcp.json'), ['servers']),
        ];
      case 'windsurf':
        return [at('user', user, ['mcpServers'])];
      case 'codex':
        return [
          at('user', user, ['mcp_servers'], 'toml'),
          at('project', j(p.cwd, '.codex', 'config.toml'), ['mcp_servers'], 'toml'),
        ];
      case 'gemini':
        return [at('user', user, ['mcpServers']), at('project', j(p.cwd, '.gemini', 'settings.json'), ['mcpServers'])];
      case 'zed':
        return [
          at('user', user, ['context_servers']),
          at('project', j(p.cwd, '.zed', 'settings.json'), ['context_servers']),
        ];
    }
  })();
  // Run from the home folder, a project file is the user file (~/.cursor/mcp.json): listed once.
  const seen = new Set<string>();
  return list.filter((l) => {
    const key = `${l.file}\0${l.path.join('\0')}`;
    if (seen.has(key)) return false;
    seen.add(key);
    return true;
  });
}

/** How a location is named to a person: `user`, `project (.mcp.json)`. */
export const locationLabel = (l: ClientLocation): string => `${CLIENT_LABELS[l.client]} ${l.scope}`;
