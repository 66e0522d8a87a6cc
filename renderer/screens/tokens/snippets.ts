/**
 * Ready-made configurations that make an MCP client launch gatehouse-bridge.
 * With a keychain account the config holds no secret at all; otherwise the
 * token travels in an environment variable the bridge reads (`--token-env`),
 * and VS Code asks for it with a password prompt instead of storing it.
 */
export const SNIPPET_CLIENTS = ['claude-desktop', 'cursor', 'vscode', 'claude-code'] as const;
export type SnippetClient = (typeof SNIPPET_CLIENTS)[number];

export const CLIENT_TITLES: Record<SnippetClient, string> = {
  'claude-desktop': 'Claude Desktop',
  cursor: 'Cursor',
  vscode: 'VS Code',
  'claude-code': 'Claude Code',
};

const BRIDGE_COMMAND = 'gatehouse-bridge';
const TOKEN_ENV = 'GATEHOUSE_TOKEN';

export interface SnippetInput {
  token: string;
  keychainAccount?: string | undefined;
  /** the server's name in the client's config */
  name?: string;
}

export interface Snippet {
  /** where to put it, for a person */
  where: string;
  text: string;
  /** true when the text contains the clear token */
  containsToken: boolean;
}

function bridgeArgs(keychainAccount?: string): string[] {
  return keychainAccount ? ['--token-keychain', keychainAccount] : ['--token-env', TOKEN_ENV];
}

/** POSIX shell quoting, only when needed. */
export function shellQuote(arg: string): string {
  return /^[A-Za-z0-9_@%+=:,./-]+$/.test(arg) ? arg : `'${arg.replace(/'/g, `'\\''`)}'`;
}

const json = (value: unknown) => JSON.stringify(value, null, 2);

export function snippetFor(client: SnippetClient, input: SnippetInput): Snippet {
  const name = input.name ?? 'gatehouse';
  const args = bridgeArgs(input.keychainAccount);
  const env = input.keychainAccount ? undefined : { [TOKEN_ENV]: input.token };
  const server = { command: BRIDGE_COMMAND, args, ...(env ? { env } : {}) };
  switch (client) {
    case 'claude-desktop':
      return {
        where: 'claude_desktop_config.json (Claude Desktop: Settings, Developer, Edit Config), inside "mcpServers"',
        text: json({ mcpServers: { [name]: server } }),
        containsToken: !!env,
      };
    case 'cursor':
      return {
        where: '~/.cursor/mcp.json, or .cursor/mcp.json in a project, inside "mcpServers"',
        text: json({ mcpServers: { [name]: server } }),
        containsToken: !!env,
      };
    case 'vscode':
      return {
        where: '.vscode/mcp.json in your workspace (or MCP: Open User Configuration)',
        text: input.keychainAccount
          ? json({ servers: { [name]: { type: 'stdio', command: BRIDGE_COMMAND, args } } })
          : json({
              inputs: [{ type: 'promptString', id: 'gatehouse-token', description: 'Gatehouse token', password: true }],
              servers: { [name]: { type: 'stdio', command: BRIDGE_COMMAND, args, env: { [TOKEN_ENV]: '${input:gatehouse-token}' } } },
            }),
        containsToken: false,
      };
    case 'claude-code': {
      const envFlag = env ? ` -e ${TOKEN_ENV}=${shellQuote(input.token)}` : '';
      return {
        where: 'a terminal, in the project where you use Claude Code',
        text: `claude mcp add ${shellQuote(name)}${envFlag} -- ${BRIDGE_COMMAND} ${args.map(shellQuote).join(' ')}`,
        containsToken: !!env,
      };
    }
  }
}

/** A keychain account name suggested from the token's label: "Claude Desktop on laptop" -> "claude-desktop-on-laptop". */
export function suggestAccount(label: string): string {
  const slug = label.toLowerCase().normalize('NFKD').replace(/[^a-z0-9]+/g, '-').replace(/^-+|-+$/g, '').slice(0, 60);
  return slug || 'gatehouse';
}
