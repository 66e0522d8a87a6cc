import { clientEntry, type BridgeLaunch } from '../contract/client-config.ts';
import type { ClientId } from '../contract/client-locations.ts';

/**
 * The one entry `clients connect` puts in a client's file. Every client but
 * Claude Desktop speaks Streamable HTTP itself, so it gets the gateway's MCP
 * URL with its own key and type value (`serverUrl` for Windsurf, `httpUrl`
 * for Gemini, `type: "http"` for Claude Code and VS Code, Codex's
 * `http_headers`) and a client token in the Authorization header. Claude
 * Desktop's file takes stdio only: it gets the bridge with the token read
 * from the keychain (the same entry as `gatehouse-bridge config`).
 */

export type GatehouseAccess =
  | { kind: 'http'; url: string; token: string }
  | { kind: 'bridge'; launch: BridgeLaunch; account: string; vault: 'keychain' | 'file' | 'auto' };

export const speaksHttp = (client: ClientId) => client !== 'claude-desktop';

export function gatehouseEntry(client: ClientId, access: GatehouseAccess): Record<string, unknown> {
  if (access.kind === 'bridge')
    return clientEntry('claude-desktop', access.launch, {
      kind: 'keychain',
      account: access.account,
      vault: access.vault,
    }).entry;
  const headers = { Authorization: `Bearer ${access.token}` };
  switch (client) {
    case 'claude-code':
    case 'vscode':
      return { type: 'http', url: access.url, headers };
    case 'windsurf':
      return { serverUrl: access.url, headers };
    case 'gemini':
      return { httpUrl: access.url, headers };
    case 'codex':
      // Codex refuses an inline bearer_token; a header it sends as given.
      return { url: access.url, http_headers: headers };
    default:
      return { url: access.url, headers };
  }
}
