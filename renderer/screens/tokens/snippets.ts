import {
  CLIENT_FORMATS,
  DEFAULT_SERVER_NAME,
  DEFAULT_TOKEN_ENV,
  MCP_CLIENTS,
  clientEntry,
  clientSnippet,
  type BridgeLaunch,
  type McpClient,
} from '../../../main/contract/client-config.ts';
import type { VaultBackend } from '../../../main/contract/health.ts';

/**
 * Ready-made configurations that make an MCP client launch gatehouse-bridge,
 * built by the contract's client-config (the same entries `gatehouse-bridge
 * config` writes) from the launch line the service reports in its health
 * report. With a keychain account the config holds no secret at all;
 * otherwise the token travels in an environment variable the bridge reads
 * (`--token-env`), and VS Code asks for it with a password prompt instead.
 */
export const SNIPPET_CLIENTS: readonly McpClient[] = MCP_CLIENTS;
export type SnippetClient = McpClient;

export const CLIENT_TITLES = Object.fromEntries(SNIPPET_CLIENTS.map((c) => [c, CLIENT_FORMATS[c].label])) as Record<
  SnippetClient,
  string
>;

export interface SnippetInput {
  token: string;
  keychainAccount?: string | undefined;
  /** where the service keeps the account (HealthReport.vault.backend): the file vault is named in the entry */
  vault?: VaultBackend | undefined;
  /** how this machine starts the bridge (HealthReport.bridge) */
  launch: BridgeLaunch;
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

export function snippetFor(client: SnippetClient, input: SnippetInput): Snippet {
  const token = input.keychainAccount
    ? ({
        kind: 'keychain',
        account: input.keychainAccount,
        vault: input.vault === 'file' ? 'file' : undefined,
      } as const)
    : ({ kind: 'env', variable: DEFAULT_TOKEN_ENV, value: input.token } as const);
  const entry = clientEntry(client, input.launch, token);
  return {
    where: CLIENT_FORMATS[client].where,
    text: clientSnippet(client, input.name ?? DEFAULT_SERVER_NAME, entry, input.launch.platform),
    containsToken: entry.containsToken,
  };
}

/** A keychain account name suggested from the token's label: "Claude Desktop on laptop" -> "claude-desktop-on-laptop". */
export function suggestAccount(label: string): string {
  const slug = label
    .toLowerCase()
    .normalize('NFKD')
    .replace(/[^a-z0-9]+/g, '-')
    .replace(/^-+|-+$/g, '')
    .slice(0, 60);
  return slug || 'gatehouse';
}
