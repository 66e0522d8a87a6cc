import { InsufficientScopeError, SdkError, SdkErrorCode, UnauthorizedError, type AuthProvider } from '@modelcontextprotocol/client';
import { GatehouseError } from '../../../core/errors.ts';
import { redact, REDACTED } from '../../../lib/redact.ts';
import { signInRequired } from './vault-provider.ts';

/** What an OAuth upstream's connection holds: the transport's token source, and how a sign-in failure reads. */
export interface UpstreamAuth {
  provider: AuthProvider;
  /** an SDK failure about the sign-in as a clear `sign_in_required`; null for anything else */
  explain(e: unknown): GatehouseError | null;
}

/** JWTs and long opaque strings after `code=`/`token` words never reach a message, whatever a server echoes. */
const JWT = /\beyJ[A-Za-z0-9_-]{5,}\.[A-Za-z0-9_-]{5,}\.[A-Za-z0-9_-]*/g;

export function scrubOAuth(e: unknown): string {
  const text = e instanceof Error ? e.message : String(e);
  return redact(text.replace(JWT, REDACTED)).replace(/\b(code|code_verifier|refresh_token|access_token)=[^\s&"']+/g, `$1=${REDACTED}`).slice(0, 500);
}

/** The error a connection reports when the SDK's transport gave up on auth; `stepUp` records the scopes a server asked for. */
export function sdkFailure(e: unknown, id: string, stepUp: (scope: string | undefined) => GatehouseError): GatehouseError | null {
  if (e instanceof GatehouseError) return e.code === 'sign_in_required' ? e : null;
  if (e instanceof InsufficientScopeError) return stepUp(e.requiredScope);
  const cause = e instanceof Error ? (e as Error & { cause?: unknown }).cause : undefined;
  if (cause instanceof GatehouseError && cause.code === 'sign_in_required') return cause;
  if (cause instanceof InsufficientScopeError) return stepUp(cause.requiredScope);
  if (e instanceof UnauthorizedError || (e instanceof SdkError && e.code === SdkErrorCode.ClientHttpAuthentication)) return signInRequired(id, 'the server refused the token');
  return null;
}
