import type { AuthProvider } from '@modelcontextprotocol/client';
import { loadedClientSdk } from '../client-sdk.ts';
import { OAUTH_CALLBACK_PATH, OAUTH_CALLBACK_PORTS } from '../../../contract/oauth.ts';
import { GatehouseError } from '../../../core/errors.ts';
import { redact, REDACTED } from '../../../lib/redact.ts';
import { signInRequired } from './vault-provider.ts';

/** What an OAuth upstream's connection holds: the transport's token source, and how a sign-in failure reads. */
export interface UpstreamAuth {
  provider: AuthProvider;
  /** an SDK failure about the sign-in as a clear `sign_in_required`; null for anything else */
  explain(e: unknown): GatehouseError | null;
  /** what the sign-in waits for, if anything: a person signed out, or a sign-in (again) is needed; null while signed in */
  needs(): 'signed_out' | 'sign_in_required' | null;
  /** its access and refresh tokens as known now (the current ones, and those refreshed away this run): masked in its answers */
  known(): readonly string[];
  /** the transport's fetch, made to remember which bearer each 401 answered (a 401 to a token since replaced is not a refusal of the new one) */
  fetch(base: typeof fetch): typeof fetch;
}

/** JWTs and long opaque strings after `code=`/`token` words never reach a message, whatever a server echoes. */
const JWT = /\beyJ[A-Za-z0-9_-]{5,}\.[A-Za-z0-9_-]{5,}\.[A-Za-z0-9_-]*/g;

export function scrubOAuth(e: unknown): string {
  const text = e instanceof Error ? e.message : String(e);
  return redact(text.replace(JWT, REDACTED))
    .replace(/\b(code|code_verifier|refresh_token|access_token)=[^\s&"']+/g, `$1=${REDACTED}`)
    .slice(0, 500);
}

/** The error a connection reports when the SDK's transport gave up on auth; `stepUp` records the scopes a server asked for. */
export function sdkFailure(
  e: unknown,
  id: string,
  stepUp: (scope: string | undefined) => GatehouseError,
): GatehouseError | null {
  if (e instanceof GatehouseError) return e.code === 'sign_in_required' ? e : null;
  const cause = e instanceof Error ? (e as Error & { cause?: unknown }).cause : undefined;
  if (cause instanceof GatehouseError && cause.code === 'sign_in_required') return cause;
  // An error of the SDK's comes after the SDK loaded: before that, nothing here is one.
  const sdk = loadedClientSdk();
  if (!sdk) return null;
  const { InsufficientScopeError, SdkError, SdkErrorCode, UnauthorizedError } = sdk;
  if (e instanceof InsufficientScopeError) return stepUp(e.requiredScope);
  if (cause instanceof InsufficientScopeError) return stepUp(cause.requiredScope);
  if (e instanceof UnauthorizedError || (e instanceof SdkError && e.code === SdkErrorCode.ClientHttpAuthentication))
    return signInRequired(id, 'the server refused the token');
  return null;
}

/**
 * Why a sign-in could not start. The one a person can act on is named: an
 * authorization server Gatehouse cannot register with by itself (no dynamic
 * registration, no Client ID Metadata Documents) needs a client id made there.
 */
export function startFailure(id: string, e: unknown): GatehouseError {
  const text = scrubOAuth(e);
  if (/does not support dynamic client registration/i.test(text)) {
    return new GatehouseError(
      'upstream_error',
      `upstream '${id}': its authorization server offers neither dynamic client registration nor Client ID Metadata Documents, so Gatehouse cannot register itself there. Register a client for Gatehouse with that server (redirect URIs ${OAUTH_CALLBACK_PORTS.map((p) => `http://127.0.0.1:${p}${OAUTH_CALLBACK_PATH}`).join(', ')}) and add the upstream again with --client-id ID (gatehouse upstreams add ${id} --url URL --oauth --client-id ID)`,
    );
  }
  return new GatehouseError('upstream_error', `upstream '${id}': the sign-in could not start: ${text}`);
}
