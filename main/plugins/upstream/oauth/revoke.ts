import type { FetchLike } from '@modelcontextprotocol/client';
import { clientSdk } from '../client-sdk.ts';
import type { OAuthRevocation } from '../../../contract/oauth-status.ts';
import { scrubOAuth } from './oauth-errors.ts';
import type { StoredTokens } from './oauth-vault.ts';

/** How long a sign-out waits for the authorization server before deleting locally anyway. */
const REVOKE_TIMEOUT_MS = 10_000;

interface RevocationMetadata {
  revocation_endpoint?: string;
  revocation_endpoint_auth_methods_supported?: string[];
}

export interface RevokeInput {
  tokens: StoredTokens;
  /** the registration the tokens were issued to (client id, and the secret when the server gave one) */
  client: { client_id: string; client_secret?: string; token_endpoint_auth_method?: string } | null;
  fetch?: FetchLike;
  timeoutMs?: number;
}

/**
 * Tells the authorization server that a sign-out's tokens are no longer
 * wanted (RFC 7009): the refresh token first (which, at most servers, ends
 * the whole grant), then the access token (one the server says it cannot
 * revoke, a JWT, is let go: it expires within minutes and cannot be renewed). The MCP SDK has no revocation,
 * so the request is oauth4webapi's; the metadata comes from the SDK's
 * discovery with its exact-issuer check, the client authentication is the
 * SDK's choice for the token endpoint (the registration's method, when the
 * server supports it), and a plain-http endpoint is refused unless it is a
 * loopback one, as the SDK refuses for the token endpoint. Never throws:
 * the caller deletes its copy whatever this answers, and the answer names
 * no token.
 */
export async function revokeTokens(input: RevokeInput): Promise<OAuthRevocation> {
  const { assertSecureTokenEndpoint, discoverAuthorizationServerMetadata, selectClientAuthMethod } = await clientSdk();
  const { tokens } = input;
  const ms = input.timeoutMs ?? REVOKE_TIMEOUT_MS;
  const base = input.fetch ?? fetch;
  const timed: FetchLike = (url, init) => base(url, { ...init, signal: AbortSignal.timeout(ms) });
  try {
    // Both RFC 8414 and OpenID metadata name these (RFC 7009 / RFC 8414 section 2); the SDK's type lists them for neither.
    const meta = (await discoverAuthorizationServerMetadata(tokens.issuer, { fetchFn: timed })) as
      (RevocationMetadata & { issuer: string; token_endpoint_auth_methods_supported?: string[] }) | undefined;
    if (!meta) return failed(`the authorization server ${tokens.issuer} publishes no metadata`);
    if (!meta.revocation_endpoint) return { outcome: 'not_offered', warning: null };
    if (!input.client) return failed('the registration with the authorization server is no longer on record');
    const endpoint = assertSecureTokenEndpoint(meta.revocation_endpoint);
    const o = await import('oauth4webapi');
    const supported =
      meta.revocation_endpoint_auth_methods_supported ?? meta.token_endpoint_auth_methods_supported ?? [];
    const method = selectClientAuthMethod(input.client, supported);
    const secret = input.client.client_secret ?? '';
    const clientAuth =
      method === 'client_secret_basic'
        ? o.ClientSecretBasic(secret)
        : method === 'client_secret_post'
          ? o.ClientSecretPost(secret)
          : o.None();
    const as = { issuer: meta.issuer, revocation_endpoint: endpoint.href };
    const options = {
      [o.customFetch]: timed as typeof fetch,
      [o.allowInsecureRequests]: endpoint.protocol === 'http:',
    };
    const pairs: Array<[string, string | undefined]> = [
      ['refresh_token', tokens.refresh_token],
      ['access_token', tokens.access_token],
    ];
    let refused: string | null = null;
    for (const [hint, token] of pairs) {
      if (!token) continue;
      try {
        const response = await o.revocationRequest(as, { client_id: input.client.client_id }, clientAuth, token, {
          ...options,
          additionalParameters: { token_type_hint: hint },
        });
        await o.processRevocationResponse(response);
      } catch (e) {
        // A self-contained (JWT) access token that the server cannot revoke (RFC 7009 unsupported_token_type) ends at its
        // expiry, minutes away; with the refresh token revoked nothing can renew it. Any other refusal is reported.
        if (
          hint === 'access_token' &&
          tokens.refresh_token &&
          !refused &&
          (e as { error?: unknown }).error === 'unsupported_token_type'
        )
          continue;
        refused ??= describe(e);
      }
    }
    return refused ? failed(refused) : { outcome: 'revoked', warning: null };
  } catch (e) {
    return failed(describe(e));
  }
}

/** oauth4webapi's error for an OAuth error answer keeps the server's `error` and `error_description` apart from its message. */
function describe(e: unknown): string {
  const body = e as { error?: unknown; error_description?: unknown; status?: unknown };
  const said =
    typeof body.error === 'string'
      ? `${body.status ? `HTTP ${String(body.status)}: ` : ''}${body.error}${typeof body.error_description === 'string' ? `: ${body.error_description}` : ''}`
      : null;
  return scrubOAuth(said ?? e).slice(0, 300);
}

const failed = (why: string): OAuthRevocation => ({
  outcome: 'failed',
  warning: `the authorization server could not be told to revoke the tokens (${why}); they are deleted here anyway and stay valid there until they expire`,
});
