/**
 * How each MCP client is told to start gatehouse-bridge: the shape of one
 * server entry, the top-level key it goes under, how the token reaches the
 * bridge, and the `claude mcp add` line. One source for the bridge's config
 * writer (`gatehouse-bridge config`) and the console's snippets. No zod and
 * no imports: the bridge's lazily loaded config writer carries this file.
 *
 * The command is never a bare `gatehouse-bridge` (not on PATH for a checkout
 * install): it is the launch line the service or the writer knows works here,
 * an absolute node plus the absolute bin/gatehouse-bridge.mjs, with no shell
 * in between, so paths with spaces need no quoting.
 */

export const MCP_CLIENTS = ['claude-desktop', 'cursor', 'vscode', 'claude-code', 'windsurf'] as const;
export type McpClient = (typeof MCP_CLIENTS)[number];

export interface ClientFormat {
  label: string;
  /** the top-level key holding the servers */
  key: 'mcpServers' | 'servers';
  /** entries carry `"type": "stdio"` */
  typed: boolean;
  /** the client can prompt for a secret (VS Code `inputs` with `password: true`), so no token is stored */
  prompts: boolean;
  /** where a person puts the entry */
  where: string;
}

export const CLIENT_FORMATS: Record<McpClient, ClientFormat> = {
  'claude-desktop': {
    label: 'Claude Desktop',
    key: 'mcpServers',
    typed: false,
    prompts: false,
    where: 'claude_desktop_config.json (Claude Desktop: Settings, Developer, Edit Config), inside "mcpServers"',
  },
  cursor: {
    label: 'Cursor',
    key: 'mcpServers',
    typed: false,
    prompts: false,
    where: '~/.cursor/mcp.json, or .cursor/mcp.json in a project, inside "mcpServers"',
  },
  vscode: {
    label: 'VS Code',
    key: 'servers',
    typed: true,
    prompts: true,
    where: 'the user mcp.json (MCP: Open User Configuration), or .vscode/mcp.json in a workspace',
  },
  'claude-code': {
    label: 'Claude Code',
    key: 'mcpServers',
    typed: true,
    prompts: false,
    where: 'a terminal (user scope: every project sees it)',
  },
  windsurf: {
    label: 'Windsurf',
    key: 'mcpServers',
    typed: false,
    prompts: false,
    where: '~/.codeium/windsurf/mcp_config.json, inside "mcpServers"',
  },
};

export const DEFAULT_SERVER_NAME = 'gatehouse';
export const DEFAULT_TOKEN_ENV = 'GATEHOUSE_TOKEN';
const INPUT_ID = 'gatehouse-token';

/** How to start the bridge on the machine: command and leading arguments (script, data dir). */
export interface BridgeLaunch {
  command: string;
  args: string[];
  /** the platform the command runs on: quoting of the `claude mcp add` line */
  platform: string;
}

/**
 * The flags the bridge needs to find what the service uses: its data dir when
 * it is not the default (a client starts the bridge without the service's
 * environment, so GATEHOUSE_DATA_DIR would be lost). The vault goes with the
 * token source (`--vault` matters only to a token read from the vault).
 */
export function bridgeLaunchArgs(script: string, o: { dataDir: string; defaultDataDir: string }): string[] {
  return [script, ...(o.dataDir !== o.defaultDataDir ? ['--data-dir', o.dataDir] : [])];
}

/**
 * Where the bridge gets the token. `value` is the clear token when the caller has it (the console, right after creating it).
 * `vault` names the vault the account is in when the bridge's `auto` would not find it (the service keeps its secrets in the file vault).
 */
export type TokenSource =
  | { kind: 'keychain'; account: string; vault?: 'keychain' | 'file' | 'auto' | undefined }
  | { kind: 'env'; variable: string; value?: string }
  | { kind: 'none' };

export interface ClientEntry {
  /** the server entry, stored under `[key][name]` */
  entry: Record<string, unknown>;
  /** VS Code: the top-level `inputs` the entry refers to */
  inputs?: Array<Record<string, unknown>>;
  /** the entry holds the clear token */
  containsToken: boolean;
}

export class ClientConfigError extends Error {
  override name = 'ClientConfigError';
}

/**
 * One client's entry. With the token in an environment variable the entry
 * must really supply it: VS Code prompts for it (password input); the others
 * start servers with their own environment, so the entry's `env` carries the
 * value, and without a value there is no working entry (ClientConfigError).
 */
export function clientEntry(
  client: McpClient,
  launch: BridgeLaunch,
  token: TokenSource,
  extraArgs: readonly string[] = [],
): ClientEntry {
  const format = CLIENT_FORMATS[client];
  const args = [...launch.args, ...extraArgs, ...tokenArgs(token)];
  const base: Record<string, unknown> = format.typed
    ? { type: 'stdio', command: launch.command, args }
    : { command: launch.command, args };
  if (token.kind !== 'env') return { entry: base, containsToken: false };
  if (format.prompts) {
    return {
      entry: { ...base, env: { [token.variable]: `\${input:${INPUT_ID}}` } },
      inputs: [{ type: 'promptString', id: INPUT_ID, description: 'Gatehouse token', password: true }],
      containsToken: false,
    };
  }
  if (!token.value) {
    throw new ClientConfigError(
      `${format.label} starts its servers with its own environment, not this shell's, so an entry with --token-env ${token.variable} must hold the token in its "env"`,
    );
  }
  return { entry: { ...base, env: { [token.variable]: token.value } }, containsToken: true };
}

function tokenArgs(token: TokenSource): string[] {
  if (token.kind === 'keychain')
    return [
      '--token-keychain',
      token.account,
      ...(token.vault && token.vault !== 'auto' ? ['--vault', token.vault] : []),
    ];
  if (token.kind === 'env') return ['--token-env', token.variable];
  return [];
}

/** The JSON a person pastes: the entry under its key (and VS Code's inputs first). */
export function clientDocument(client: McpClient, name: string, e: ClientEntry): Record<string, unknown> {
  return { ...(e.inputs ? { inputs: e.inputs } : {}), [CLIENT_FORMATS[client].key]: { [name]: e.entry } };
}

/** `claude mcp add --scope user`, quoted for the platform's usual shell (cmd on Windows). */
export function claudeMcpAddCommand(name: string, e: ClientEntry, platform: string): string {
  const q = platform === 'win32' ? quoteWindows : quotePosix;
  const env = (e.entry.env ?? {}) as Record<string, string>;
  const envFlags = Object.entries(env).flatMap(([k, v]) => ['-e', `${k}=${v}`]);
  // -e takes several values, so it goes after the name and before "--".
  return [
    'claude',
    'mcp',
    'add',
    '--scope',
    'user',
    name,
    ...envFlags,
    '--',
    e.entry.command as string,
    ...(e.entry.args as string[]),
  ]
    .map(q)
    .join(' ');
}

export function quotePosix(s: string): string {
  return /^[A-Za-z0-9_\-+=./:@,%]+$/.test(s) ? s : `'${s.replace(/'/g, `'\\''`)}'`;
}

function quoteWindows(s: string): string {
  return /^[A-Za-z0-9_\-+=./:\\@,]+$/.test(s) ? s : `"${s.replace(/"/g, '\\"')}"`;
}

/** What a person copies for one client: the `claude mcp add` line or the JSON document. */
export function clientSnippet(client: McpClient, name: string, e: ClientEntry, platform: string): string {
  return client === 'claude-code'
    ? claudeMcpAddCommand(name, e, platform)
    : JSON.stringify(clientDocument(client, name, e), null, 2);
}
