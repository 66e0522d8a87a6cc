import { loadedClientSdk } from '../client-sdk.ts';
import type {
  OAuthClientInformationContext,
  OAuthClientMetadata,
  OAuthClientProvider,
  OAuthDiscoveryState,
  StoredOAuthClientInformation,
  StoredOAuthTokens,
} from '@modelcontextprotocol/client';
import type { Vault } from '../../../core/ports/ports.ts';
import { GatehouseError } from '../../../core/errors.ts';
import { VERSION } from '../../../version.ts';
import type { StoredFlow } from './oauth-vault.ts';
import {
  clientAccount,
  flowAccount,
  readItem,
  StoredClient,
  StoredTokens,
  tokensAccount,
  writeItem,
} from './oauth-vault.ts';
import { checkAuthorizationUrl } from './open-url.ts';

/**
 * The SDK's OAuthClientProvider over Gatehouse's vault, for one run of the
 * SDK's `auth()` against one upstream. The SDK does the protocol (RFC 9728
 * discovery, AS metadata with its issuer check, PKCE S256, RFC 8707
 * `resource`, CIMD, dynamic registration, the callback's `iss`, refresh);
 * this class keeps what it hands over, and adds the refusals the MCP
 * authorization spec makes MUSTs and the SDK leaves to the host: an exact
 * issuer, PKCE S256 advertised, an http(s) authorization URL.
 *
 * A run is one of three kinds:
 *  - `refresh`: no person is there. It may refresh; anything that would need
 *    the browser stops with `sign_in_required` before a verifier is written.
 *  - `start`: a person asked to sign in. The verifier and the state go to the
 *    vault, then the authorization URL is handed to the coordinator.
 *  - `callback`: the browser came back with a code; the stored flow gives
 *    the verifier and the discovery the SDK checks the issuer against.
 */

export interface OAuthTarget {
  /** the upstream id (for messages) */
  id: string;
  /** the MCP server URL */
  url: string;
  client_id: string | null;
  /** the vault account of that pre-registered client's secret (a confidential client) */
  client_secret_account?: string | null;
  scopes: string | null;
  client_metadata_url: string | null;
}

/** The SDK's own RFC 8707 rule: the claimed resource is this server's origin and a prefix of its path. */
function resourceAllowed(serverUrl: string, claimed: string): boolean {
  // Asked during a discovery, which the SDK did (or the coordinator, once it loaded the SDK).
  const sdk = loadedClientSdk();
  if (!sdk) return false;
  const { checkResourceAllowed, resourceUrlFromServerUrl } = sdk;
  try {
    return checkResourceAllowed({
      requestedResource: resourceUrlFromServerUrl(serverUrl),
      configuredResource: claimed,
    });
  } catch {
    return false;
  }
}

/**
 * RFC 8414 section 3.3: the metadata's issuer is identical to the issuer its well-known URL was made from. One
 * equivalence only: an origin written with or without its root `/` (`http://as:1` and `http://as:1/`) is one URL
 * (RFC 3986 section 6.2.3) with one well-known URL, and an issuer found from the server's origin, where no protected
 * resource metadata names one (the 2025-03-26 spec), is always written with the `/`. Any other difference (a path, a
 * path's trailing `/`, case, a port) is another issuer, refused.
 */
export function sameIssuer(published: string, fetchedFor: string): boolean {
  if (published === fetchedFor) return true;
  const origin = (s: string) => {
    try {
      const u = new URL(s);
      return s === u.origin || s === `${u.origin}/` ? u.origin : null;
    } catch {
      return null;
    }
  };
  const a = origin(published);
  return a !== null && a !== 'null' && a === origin(fetchedFor);
}

/**
 * A client a person registered beforehand: its id, and its secret from the vault when it is a confidential one (the
 * SDK then authenticates with client_secret_basic, or client_secret_post where the server's metadata lists only that).
 */
export async function preregisteredClient(
  vault: Vault,
  target: OAuthTarget,
): Promise<{ client_id: string; client_secret?: string }> {
  const client_id = target.client_id!;
  if (!target.client_secret_account) return { client_id };
  const client_secret = await vault.get(target.client_secret_account);
  if (client_secret === null)
    throw new GatehouseError(
      'vault_unavailable',
      `the client secret of upstream '${target.id}' is not in the vault; add the upstream again with --client-secret -`,
    );
  return { client_id, client_secret };
}

export type RunKind =
  | { kind: 'refresh' }
  | { kind: 'start'; state: string; onAuthorizationUrl(url: URL): void }
  | { kind: 'callback'; flow: StoredFlow };

export const signInRequired = (id: string, why: string) =>
  new GatehouseError(
    'sign_in_required',
    `upstream '${id}' ${why === 'signed out' ? 'is signed out' : `needs a sign-in (${why})`}: run gatehouse upstreams login ${id}, or use Sign in on the console's Upstreams screen`,
    { upstream: id },
  );

export class VaultOAuthProvider implements OAuthClientProvider {
  /** what discovery found in this run (the coordinator keys the sign-in by it) */
  issuer: string | null = null;
  resource: string | null = null;
  private discovery: OAuthDiscoveryState | undefined;

  constructor(
    private readonly vault: Vault,
    private readonly target: OAuthTarget,
    private readonly redirectUri: string,
    /** every redirect URI the registration names (the fixed loopback ports) */
    private readonly redirectUris: string[],
    private readonly run: RunKind,
    /** tokens just stored (the coordinator knows them from that moment: connection.ts masks them in answers) */
    private readonly onSaved?: (key: { issuer: string; resource: string }, tokens: StoredTokens) => void,
  ) {
    if (run.kind === 'callback') {
      // The callback leg reuses the discovery its sign-in started with (the SDK checks the issuer against it): the key comes from there.
      const d = run.flow.discovery;
      this.issuer = d.authorizationServerMetadata?.issuer ?? null;
      this.resource = d.resourceMetadata?.resource ?? null;
    }
  }

  get redirectUrl(): string {
    return this.redirectUri;
  }

  get clientMetadataUrl(): string | undefined {
    return this.target.client_metadata_url ?? undefined;
  }

  get clientMetadata(): OAuthClientMetadata {
    return {
      client_name: 'Gatehouse',
      redirect_uris: this.redirectUris,
      grant_types: ['authorization_code', 'refresh_token'],
      response_types: ['code'],
      token_endpoint_auth_method: 'none',
      application_type: 'native',
      software_id: 'gatehouse',
      software_version: VERSION,
      ...(this.target.scopes ? { scope: this.target.scopes } : {}),
    } as OAuthClientMetadata;
  }

  state(): string {
    if (this.run.kind !== 'start') throw signInRequired(this.target.id, 'no valid token');
    return this.run.state;
  }

  async clientInformation(ctx?: OAuthClientInformationContext): Promise<StoredOAuthClientInformation | undefined> {
    const issuer = ctx?.issuer ?? this.issuer;
    if (!issuer) return undefined;
    if (this.target.client_id) return { ...(await preregisteredClient(this.vault, this.target)), issuer };
    const stored = await readItem(this.vault, clientAccount(issuer), StoredClient);
    if (!stored) {
      // Registering is part of a sign-in a person asked for; a background refresh never registers.
      if (this.run.kind === 'refresh')
        throw signInRequired(this.target.id, 'not registered with its authorization server');
      return undefined;
    }
    const { registration: _r, ...info } = stored;
    return info;
  }

  async saveClientInformation(info: StoredOAuthClientInformation, ctx?: OAuthClientInformationContext): Promise<void> {
    const issuer = ctx?.issuer ?? info.issuer ?? this.issuer;
    if (!issuer || this.target.client_id) return;
    const registration = info.client_id === this.target.client_metadata_url ? 'metadata_document' : 'dynamic';
    await writeItem(this.vault, clientAccount(issuer), { ...info, issuer, registration });
  }

  async tokens(ctx?: OAuthClientInformationContext): Promise<StoredOAuthTokens | undefined> {
    const key = this.key(ctx);
    if (!key) return undefined;
    const t = await readItem(this.vault, tokensAccount(key.issuer, key.resource), StoredTokens);
    if (!t) return undefined;
    return {
      access_token: t.access_token,
      token_type: t.token_type,
      issuer: t.issuer,
      ...(t.refresh_token ? { refresh_token: t.refresh_token } : {}),
      ...(t.scope ? { scope: t.scope } : {}),
      ...(t.expires_at ? { expires_in: Math.max(0, Math.floor((t.expires_at - Date.now()) / 1000)) } : {}),
    };
  }

  async saveTokens(tokens: StoredOAuthTokens, ctx?: OAuthClientInformationContext): Promise<void> {
    const key = this.key(ctx);
    if (!key)
      throw new GatehouseError(
        'upstream_error',
        `upstream '${this.target.id}': tokens arrived before discovery named the authorization server`,
      );
    // A refresh answer without a refresh token keeps the one held (RFC 6749 section 6); a first sign-in without one holds none.
    const previous =
      this.run.kind === 'refresh'
        ? await readItem(this.vault, tokensAccount(key.issuer, key.resource), StoredTokens)
        : undefined;
    const refresh = tokens.refresh_token ?? previous?.refresh_token;
    const stored: StoredTokens = {
      issuer: key.issuer,
      resource: key.resource,
      access_token: tokens.access_token,
      token_type: tokens.token_type,
      ...(refresh ? { refresh_token: refresh } : {}),
      ...((tokens.scope ?? previous?.scope) ? { scope: tokens.scope ?? previous?.scope } : {}),
      ...(typeof tokens.expires_in === 'number' ? { expires_at: Date.now() + tokens.expires_in * 1000 } : {}),
    };
    await writeItem(this.vault, tokensAccount(key.issuer, key.resource), stored);
    this.onSaved?.(key, stored);
  }

  async saveCodeVerifier(codeVerifier: string): Promise<void> {
    if (this.run.kind !== 'start')
      throw signInRequired(this.target.id, 'the refresh token was refused or there is none');
    const key = this.key();
    if (!key || !this.discovery)
      throw new GatehouseError(
        'upstream_error',
        `upstream '${this.target.id}': discovery did not finish before the sign-in`,
      );
    const flow: StoredFlow = {
      state: this.run.state,
      code_verifier: codeVerifier,
      redirect_uri: this.redirectUri,
      discovery: this.discovery,
      started_at: Date.now(),
    };
    await writeItem(this.vault, flowAccount(key.issuer, key.resource), flow);
  }

  codeVerifier(): string {
    if (this.run.kind !== 'callback') throw signInRequired(this.target.id, 'no sign-in is under way');
    return this.run.flow.code_verifier;
  }

  redirectToAuthorization(url: URL): void {
    if (this.run.kind !== 'start') throw signInRequired(this.target.id, 'no valid token');
    checkAuthorizationUrl(url);
    this.run.onAuthorizationUrl(url);
  }

  discoveryState(): OAuthDiscoveryState | undefined {
    // A new sign-in and a refresh discover afresh (a changed authorization server is seen); the callback checks against what the sign-in started with.
    return this.run.kind === 'callback' ? this.run.flow.discovery : undefined;
  }

  saveDiscoveryState(state: OAuthDiscoveryState): void {
    const meta = state.authorizationServerMetadata;
    if (!meta)
      throw new GatehouseError(
        'upstream_error',
        `upstream '${this.target.id}': its authorization server ${state.authorizationServerUrl} publishes no metadata; Gatehouse signs in only where PKCE S256 is advertised`,
      );
    // The MCP authorization spec: the metadata's issuer is the URL it was fetched for (RFC 8414 section 3.3; sameIssuer).
    if (!sameIssuer(meta.issuer, state.authorizationServerUrl))
      throw new GatehouseError(
        'upstream_error',
        `upstream '${this.target.id}': the authorization server's metadata names issuer ${JSON.stringify(meta.issuer).slice(0, 300)}, not ${JSON.stringify(state.authorizationServerUrl).slice(0, 300)}: refused`,
      );
    if (!meta.code_challenge_methods_supported?.includes('S256'))
      throw new GatehouseError(
        'upstream_error',
        `upstream '${this.target.id}': the authorization server does not advertise PKCE S256 (code_challenge_methods_supported): refused`,
      );
    // Never a token for another server: metadata naming a resource this URL is not part of is refused on every path (the
    // SDK checks it inside auth() only, and a 401's discovery would otherwise reuse that other resource's sign-in).
    const claimed = state.resourceMetadata?.resource;
    if (claimed && !resourceAllowed(this.target.url, claimed))
      throw new GatehouseError(
        'upstream_error',
        `upstream '${this.target.id}': its protected resource metadata names the resource ${JSON.stringify(claimed).slice(0, 300)}, which ${this.target.url.slice(0, 300)} is not part of: refused (a token for it would go to another server)`,
      );
    this.discovery = state;
    this.issuer = meta.issuer;
    this.resource ??= state.resourceMetadata?.resource ?? null;
  }

  /** what this run's discovery found (after saveDiscoveryState accepted it) */
  get discovered(): OAuthDiscoveryState | undefined {
    return this.discovery;
  }

  saveResourceUrl(resource: string): void {
    this.resource = resource;
  }

  async invalidateCredentials(scope: 'all' | 'client' | 'tokens' | 'verifier' | 'discovery'): Promise<void> {
    const key = this.key();
    if ((scope === 'all' || scope === 'tokens') && key)
      await this.vault.delete(tokensAccount(key.issuer, key.resource));
    if ((scope === 'all' || scope === 'verifier') && key)
      await this.vault.delete(flowAccount(key.issuer, key.resource));
    if ((scope === 'all' || scope === 'client') && this.issuer && !this.target.client_id)
      await this.vault.delete(clientAccount(this.issuer));
  }

  /** issuer + resource; a server without protected resource metadata is its own resource */
  key(ctx?: OAuthClientInformationContext): { issuer: string; resource: string } | null {
    const issuer = ctx?.issuer ?? this.issuer;
    return issuer ? { issuer, resource: this.resource ?? this.target.url } : null;
  }
}
